from agentrt.cli import main

main()
