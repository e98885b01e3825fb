"""PORT for every command: a path, auto, virtual, or nothing (the one board, else virtual);
and what is wrong with a port: missing, busy, no permission."""

import errno
import os
import subprocess
import sys

import pytest
import serial

from tinyattn_host.board import ports
from tinyattn_host.board.ports import check_port, choose
from tinyattn_host.errors import BoardError

S3_USB = ("/dev/ttyACM0", 0x303A, 0x1001, "USB JTAG/serial debug unit")
CP2102 = ("/dev/ttyUSB0", 0x10C4, 0xEA60, "CP2102 USB to UART Bridge Controller")
CH340 = ("/dev/ttyUSB1", 0x1A86, 0x7523, "USB Serial")
MOUSE = ("/dev/ttyACM5", 0x046D, 0xC52B, "a USB receiver that is no board")


def test_a_path_is_used_as_given(attached):
    attached(S3_USB)
    assert choose("/dev/ttyUSB7") == "/dev/ttyUSB7"


def test_nothing_attached_means_the_virtual_board(attached):
    attached(MOUSE)
    assert choose(None) is None and choose("") is None and choose("virtual") is None


@pytest.mark.parametrize("device", [S3_USB, CP2102, CH340])
def test_the_one_candidate_is_chosen_without_a_port_and_with_auto(attached, device):
    attached(MOUSE, device)
    assert choose(None) == device[0]
    assert choose("auto") == device[0]


def test_virtual_wins_over_an_attached_board(attached):
    attached(S3_USB)
    assert choose("virtual") is None


def test_auto_without_a_board_says_so(attached):
    attached(MOUSE)
    with pytest.raises(BoardError, match="^PORT=auto: no ESP32-S3 on USB"):
        choose("auto")


def test_two_candidates_ask_which(attached):
    attached(CP2102, S3_USB)
    for port in (None, "auto"):
        with pytest.raises(BoardError, match="^2 candidate boards: /dev/ttyACM0, /dev/ttyUSB0; "
                                             "pick one with PORT="):
            choose(port)


def test_candidates_list_espressif_first_and_describe_them(attached):
    attached(CH340, MOUSE, S3_USB)
    lines = [ports.describe(p) for p in ports.candidates()]
    assert lines == [
        "/dev/ttyACM0   303a:1001  Espressif USB  (USB JTAG/serial debug unit)",
        "/dev/ttyUSB1   1a86:7523  WCH CH340/CH9102  (USB Serial)",
    ]


def test_make_devs_prints_the_candidates():
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "devs"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.strip()  # a line a candidate, or one saying there is none


def test_check_port_missing_busy_and_free():
    master, slave = os.openpty()
    path = os.ttyname(slave)
    try:
        with pytest.raises(BoardError, match="^no such port: /dev/ttyNONE "):
            check_port("/dev/ttyNONE")
        check_port(path)
        with serial.Serial(path, exclusive=True):
            with pytest.raises(BoardError, match="^port busy: another program .* has %s open"
                                                 % path):
                check_port(path)
    finally:
        os.close(slave)
        os.close(master)


def test_check_port_without_permission(monkeypatch, tmp_path):
    """As root every open succeeds, so the refusal comes from a stand-in for pyserial."""
    path = tmp_path / "ttyACM0"
    path.touch()

    def refuse(*args, **kwargs):
        raise serial.SerialException(errno.EACCES, "could not open port: Permission denied")
    monkeypatch.setattr(serial, "Serial", refuse)
    with pytest.raises(BoardError, match="^no permission to open .*dialout"):
        check_port(str(path))
