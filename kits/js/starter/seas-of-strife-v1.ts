// My Seas of Strife bot (seas-of-strife-v1). Points are bad: avoid winning tricks.
// The types come from the game's wire schema; docs/reference/seas-of-strife-v1.md says
// what each field means. Return one of decision.legal.
import type { Bot, MatchInfo, SeasOfStrife } from "saloon";

export default class MyBot implements Bot<SeasOfStrife.Decision> {
  seat = 0;

  onMatchStart(info: MatchInfo): void {
    this.seat = info.seat;
  }

  act(decision: SeasOfStrife.Decision): unknown {
    if (decision.kind === "PLAY_CARD") {
      // Shed the lowest card this trick allows: low cards rarely win a trick.
      return decision.legal.reduce((a, b) => (b.card < a.card ? b : a));
    }
    // CHOOSE_LEADER: let the next seat lead.
    const next = (this.seat + 1) % decision.observation.num_players;
    return decision.legal.find((a) => a.seat === next) ?? decision.legal[0];
  }
}
