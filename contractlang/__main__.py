"""`python -m contractlang …` runs the command line."""

from contractlang.cli.app import main

main()
