"""The figures of docs/why-one-pass.md, drawn from the committed headline run (no GPU needed):

    PYTHONPATH=. python3 scripts/docs-figures.py
"""

from pathlib import Path

import matplotlib.pyplot as plt

from softmax_bench.plots import FIGURES, save_png
from softmax_bench.results import Run

RUN = Run(Path("evidence/runs/20261130-020251-h200"))
# (figure, dtypes, file under docs/)
DOCS_FIGURES = [
    ("roofline", ["bf16", "fp32"], "roofline-h200.png"),
    ("bandwidth-vs-n", ["fp32"], "bandwidth-vs-n-fp32-h200.png"),
    ("bandwidth-vs-n", ["bf16"], "bandwidth-vs-n-bf16-h200.png"),
    ("registers-vs-n", ["fp32"], "registers-vs-n-fp32-h200.png"),
]

rows, meta = RUN.rows(), RUN.meta()
for figure, dtypes, name in DOCS_FIGURES:
    fig = FIGURES[figure](rows[rows["dtype"].isin(dtypes)], meta)
    save_png(fig, Path("docs") / name)
    plt.close(fig)
    print(f"docs/{name}")
