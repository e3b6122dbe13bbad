"""How a tournament's finals are run: :class:`FinalsPolicy`, every default a named
constant (docs/finals.md says why each is what it is)."""

from __future__ import annotations

from dataclasses import dataclass

from saloon.ratings.finals.records import FinalsInputError

#: The stop rule orders this many entrants at the top.
TOP_K = 10
#: ... each adjacent pair among them (and the K-th against the next) at least this sure.
CONFIDENCE = 0.95
#: Finals matches at most (the stop rule's other arm).
BUDGET = 2000
#: Matches in one batch (each rotation of a duplicate deal counts as one).
BATCH_MATCHES = 50
#: An entrant below the K-th place stays in the finals while the probability that it is
#: truly better than the K-th is at least this.
CONTENTION = 0.01


@dataclass(frozen=True)
class FinalsPolicy:
    """The finals' settings.

    ``top_k``: the stop rule orders the top K. ``confidence``: each adjacent pair among
    them, and the K-th against the (K+1)-th, must be ordered with at least this
    probability. ``budget``: finals matches at most. ``batch_matches``: matches per batch
    (a deal played as duplicates counts each rotation). ``table_sizes``: the seat counts
    the game allows (tables are spread evenly over them). ``duplicate``: play every table
    as all its seat rotations over one deal. ``contention``: see :data:`CONTENTION`.
    """

    top_k: int = TOP_K
    confidence: float = CONFIDENCE
    budget: int = BUDGET
    batch_matches: int = BATCH_MATCHES
    table_sizes: tuple[int, ...] = (2,)
    duplicate: bool = True
    contention: float = CONTENTION

    def check(self) -> None:
        """FinalsInputError (a ValueError) naming the first setting out of range."""
        if not isinstance(self.top_k, int) or self.top_k < 1:
            raise FinalsInputError(f"top_k {self.top_k!r}: must be an integer >= 1")
        if not 0.5 < self.confidence < 1:
            raise FinalsInputError(f"confidence {self.confidence!r}: must be in (0.5, 1)")
        if not isinstance(self.budget, int) or self.budget < 0:
            raise FinalsInputError(f"budget {self.budget!r}: must be an integer >= 0")
        if not isinstance(self.batch_matches, int) or self.batch_matches < 1:
            raise FinalsInputError(f"batch_matches {self.batch_matches!r}: must be an integer >= 1")
        if not self.table_sizes or any(
            not isinstance(k, int) or isinstance(k, bool) or k < 2 for k in self.table_sizes
        ):
            raise FinalsInputError(
                f"table_sizes {self.table_sizes!r}: one or more seat counts, each >= 2"
            )
        if not 0 < self.contention < 0.5:
            raise FinalsInputError(f"contention {self.contention!r}: must be in (0, 0.5)")
