"""The README's "Debug a loss" block runs as written (as ``test_readme_blocks.py`` runs the
others, with its shell session): a tournament's match is stored, then rerun against another
bot, which diverges, and one of its steps is sent again."""

from __future__ import annotations

from pathlib import Path

from test_readme_blocks import _ports, readme_block, session


def test_the_debug_a_loss_block_runs_as_written(tmp_path: Path) -> None:
    lines = readme_block("Debug a loss")
    assert any(line.startswith("gin-arena rerun ") for line in lines)
    shell = session(tmp_path, _ports(lines))
    try:
        for line in lines:
            shell.run(line)
    finally:
        shell.close()
    rerun = next(out for cmd, out in shell.outputs.items() if " --seat a " in cmd)
    assert "plays seat a (mine's)" in rerun, rerun  # the bot that lost sat in seat a
    assert "diverged at step " in rerun and "stored answer: " in rerun, rerun
    assert "result stored: " in rerun and "result rerun: " in rerun, rerun
    step = next(out for cmd, out in shell.outputs.items() if " --step 0:0:3 " in cmd)
    assert step.startswith("step 0:0:3 (seat "), step
