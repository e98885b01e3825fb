"""The Makefile asks nothing silently (issue 38): a missing Debian package is installed with
apt-get only in CI as root, after one line saying what and why; anywhere else one line says
what to run and nothing is installed. A fake apt-get on PATH records what it was asked."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"objdump": ("OBJDUMP", "binutils-xtensa-lx106"),
           "qemu": ("QEMU_XTENSA", "qemu-system-misc")}


def make(target, tmp_path, ci):
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "apt-get").write_text('#!/bin/sh\necho "$@" >> "%s"\n' % (tmp_path / "asked"))
    (fake / "apt-get").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = "%s:%s" % (fake, env["PATH"])
    if ci:
        env["CI"] = "true"
    variable, _ = TARGETS[target]
    done = subprocess.run(["make", "-s", "-C", str(ROOT), target, variable + "=no-such-tool"],
                          capture_output=True, text=True, env=env, timeout=60)
    asked = (tmp_path / "asked").read_text() if (tmp_path / "asked").exists() else ""
    return done, asked


@pytest.mark.parametrize("target", TARGETS)
def test_outside_ci_it_prints_the_command(target, tmp_path):
    done, asked = make(target, tmp_path, ci=False)
    package = TARGETS[target][1]
    assert done.returncode == 0 and asked == ""
    assert done.stdout.splitlines() == [done.stdout.strip()]  # one line
    assert done.stdout.startswith("note: no no-such-tool (")
    assert done.stdout.strip().endswith("sudo apt-get install " + package)


@pytest.mark.skipif(os.geteuid() != 0, reason="apt-get installs as root only")
@pytest.mark.parametrize("target", TARGETS)
def test_in_ci_as_root_it_says_what_and_why_then_installs(target, tmp_path):
    done, asked = make(target, tmp_path, ci=True)
    package = TARGETS[target][1]
    assert done.returncode == 0
    assert done.stdout.startswith("installing %s with apt-get (CI, root): no-such-tool, the "
                                  % package)
    assert asked.splitlines() == ["update -qq", "install -y -qq " + package]
