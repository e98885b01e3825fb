"""Every test of this suite ends: pytest-timeout is on, with a default for every test, so one
that waits forever for a board fails instead of hanging the whole run."""

import subprocess
import sys

from tinyattn_host.locations import ROOT


def test_every_test_has_a_timeout(request):
    assert 0 < float(request.config.getini("timeout")) <= 3600


def test_a_test_that_hangs_fails_instead(tmp_path):
    (tmp_path / "test_hangs.py").write_text(
        "import time\nimport pytest\n\n\n@pytest.mark.timeout(2)\n"
        "def test_hangs():\n    time.sleep(600)\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-c", str(ROOT / "pyproject.toml"),
                           "--rootdir", str(tmp_path), str(tmp_path / "test_hangs.py")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Timeout (>2.0s)" in done.stdout, done.stdout
