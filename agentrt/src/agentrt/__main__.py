"""``python -m agentrt``: the ``agentrt`` command line."""

from agentrt.cli import main

main()
