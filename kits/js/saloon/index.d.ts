// Types of the Saloon runtime for TypeScript bots (JavaScript bots need none).
// Each game's types are generated from its wire schema (kits/schema, saloon.sdk.schema).
export * as SeasOfStrife from "./games/seas_of_strife_v1";
export * as Seizure from "./games/seizure_v1";
export * as WesternShowdown from "./games/western_showdown_v1";

/** What a bot learns at the start of a match (onMatchStart). */
export interface MatchInfo {
  game: string;
  options: Record<string, string | number>;
  seat: number;
  numSeats: number;
  /** A seed for the bot's own randomness (all 64 bits). */
  seed: bigint;
  decisionMs: number;
  bankMs: number;
}

/** The end of a match (onMatchEnd): every seat's score and rank (0 best). */
export interface MatchResult {
  seat: number;
  scores: number[];
  ranks: number[];
}

/** A bot: act is required, the hooks are optional. A fresh one plays each match. */
export interface Bot<D> {
  onMatchStart?(info: MatchInfo): void;
  act(decision: D): unknown;
  onMatchEnd?(result: MatchResult): void;
}

export declare const PROTOCOL_VERSION: number;
