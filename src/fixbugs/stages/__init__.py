"""The agent's stages, one module per stage, each with its ``run_*`` body.

analysis, file_relevance, reproduce (with SBFL; :mod:`.findtest` finds a
test command when none was given), rootcause, fix and validate; what the
drivers do around them is in :mod:`.driver`. Nothing is re-exported here:
import from the stage's module.
"""
