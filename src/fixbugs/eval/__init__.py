"""``fixbugs eval``: the agent over real-bug cases, scored against their gold answers.

:mod:`.command` is the command, :mod:`.run` its driver over case folders,
:mod:`.pool` the pool of real bugs (its builder and its evaluation), :mod:`.case` what the agent may
see of a case, :mod:`.full_agent` and :mod:`.as_user` the agent runners (in
this process, or as a separate ``fixbugs run`` the way a user starts it),
:mod:`.user_reports` the reports as users write them, and :mod:`.score`
the only code that reads ``gold.json``. Nothing is re-exported here: import
from the module.
"""
