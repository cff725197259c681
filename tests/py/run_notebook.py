"""Executes a two-cell notebook headless (nbclient, the python3 kernel of this interpreter)
that shows a snapshot with `memsnap.show`, and writes the cell's HTML output into a page.

Usage: python run_notebook.py SNAPSHOT OUT.html [NOTEBOOK.ipynb]
The page holds the output as a notebook front end would put it in the document (the iframe
`memsnap.show` displays); the executed notebook is saved too when a third path is given.
Exits 1 naming what is wrong when the output is not the viewer.
"""
import sys

import nbformat
from nbclient import NotebookClient


def main() -> int:
    snapshot, out = sys.argv[1], sys.argv[2]
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import memsnap"),
        nbformat.v4.new_code_cell(f"memsnap.show({snapshot!r}, height=800)"),
    ]
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    if len(sys.argv) > 3:
        nbformat.write(nb, sys.argv[3])
    outputs = nb.cells[1].outputs
    html = [o["data"]["text/html"] for o in outputs if o.get("output_type") == "display_data"
            and "text/html" in o.get("data", {})]
    if len(html) != 1:
        print(f"memsnap.show displayed {len(html)} HTML outputs, want 1: {outputs}", file=sys.stderr)
        return 1
    if "<iframe srcdoc=" not in html[0] or "memsnap-app-wasm" not in html[0]:
        print("memsnap.show's output is not the viewer's iframe", file=sys.stderr)
        return 1
    with open(out, "w", encoding="utf-8") as f:
        f.write("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>notebook output</title>"
                "</head><body>\n" + html[0] + "\n</body></html>\n")
    print(f"{len(html[0])} characters of HTML")
    return 0


if __name__ == "__main__":
    sys.exit(main())
