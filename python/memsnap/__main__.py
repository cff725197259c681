"""`python -m memsnap ARGS...` runs the `memsnap` command."""

from ._cli import main

main()
