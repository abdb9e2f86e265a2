"""The repair engine: fix templates, ingredients, ranking and parallel validation.

Sans-IO where it can be: generation and ranking are pure functions of
source text and the failing run's output; only :mod:`.candidate_runs` runs
anything, through agentrt's scatter-gather in sandbox forks.
"""

from fixbugs.repair.generate import Region, generate_candidates, pair_edits, region_edits
from fixbugs.repair.hints import FailureHints, parse_hints, printed_literal_lines, test_literals
from fixbugs.repair.ingredients import IngredientIndex, ingredient_edits
from fixbugs.repair.ranking import PRIORS, RepairCandidate, overfit_risk, rank, to_candidate
from fixbugs.repair.source import Edit, SourceFile, parses

__all__ = [
    "PRIORS",
    "Edit",
    "FailureHints",
    "IngredientIndex",
    "Region",
    "RepairCandidate",
    "SourceFile",
    "generate_candidates",
    "ingredient_edits",
    "overfit_risk",
    "pair_edits",
    "parse_hints",
    "parses",
    "printed_literal_lines",
    "rank",
    "region_edits",
    "test_literals",
    "to_candidate",
]
