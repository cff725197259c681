"""The `memsnap` command of the Python package: the Rust CLI itself, with the packaged viewer
for `memsnap html`."""

import os
import signal
import sys

from . import VIEWER_DIR, _memsnap


def main() -> None:
    os.environ.setdefault("MEMSNAP_VIEWER", str(VIEWER_DIR))
    # The work runs in Rust: let Ctrl-C and a closed pipe end it as they end the binary.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.exit(_memsnap.main(["memsnap", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
