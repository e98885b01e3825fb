"""make flash: the firmware check (crafted images) and the exact esptool calls."""

import struct

import esptool
import pytest
from esptool.bin_image import (ELFSection, ESP32C3FirmwareImage, ESP32FirmwareImage,
                               ESP32S3FirmwareImage)
from esptool.util import FatalError

from tinyattn_host.__main__ import main
from tinyattn_host.board import deploy as deploy_module
from tinyattn_host.board import flash


def esp_image(image_class, payload=b""):
    """A small bootloader or app image, written by esptool's own image classes."""
    image = image_class()
    image.entrypoint = 0x40378000
    image.segments = [ELFSection(b".dram0.data", 0x3FC88000, bytes(range(64)) + payload, 0),
                      ELFSection(b".iram0.text", 0x40378000, bytes(200), 0)]
    return image.save(None)


def partition_table(app_offset=0x10000):
    """ESP-IDF's binary partition table: 32-byte entries, magic 0xAA50, 0xFF after the last."""
    entry = struct.Struct("<2sBBII16sI")
    rows = [(1, 0x02, 0x9000, 0x6000, b"nvs"), (1, 0x01, 0xF000, 0x1000, b"phy_init"),
            (0, 0x00, app_offset, 0x1F0000, b"factory"), (1, 0x81, 0x200000, 0x600000, b"vfs")]
    table = b"".join(entry.pack(b"\xaa\x50", kind, sub, offset, size, name, 0)
                     for kind, sub, offset, size, name in rows)
    return table + b"\xff" * 32


def merged(boot=ESP32S3FirmwareImage, app=ESP32S3FirmwareImage):
    """Bootloader at 0x0, partition table at 0x8000, app at 0x10000, as MicroPython ships it."""
    data = bytearray(b"\xff" * 0x10000)
    bootloader = esp_image(boot)
    data[:len(bootloader)] = bootloader
    table = partition_table()
    data[0x8000:0x8000 + len(table)] = table
    return bytes(data) + esp_image(app, payload=b"ulab")


@pytest.fixture
def no_esptool(monkeypatch):
    """Fail the test if anything would talk to a board."""
    def refuse(*args, **kwargs):
        raise AssertionError("esptool or deploy was called")
    monkeypatch.setattr(esptool, "main", refuse)
    monkeypatch.setattr(deploy_module, "deploy", refuse)


def write(tmp_path, data, name="firmware.bin"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def run(args, capsys):
    """Run the flash command; return (exit status, stdout, stderr)."""
    status = main(["flash", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("chip_id, name", [
    (0, "ESP32"), (2, "ESP32-S2"), (5, "ESP32-C3"), (9, "ESP32-S3"), (12, "ESP32-C2"),
    (13, "ESP32-C6"), (16, "ESP32-H2"), (18, "ESP32-P4")])
def test_chip_names_follow_espressif_image_chip_ids(chip_id, name):
    assert flash.chip_name(chip_id) == name


def test_valid_image_dry_run_prints_the_exact_esptool_calls(tmp_path, capsys, no_esptool):
    firmware = write(tmp_path, merged())
    status, out, _ = run(["--port", "/dev/ttyACM0", "--firmware", firmware, "--dry-run"], capsys)
    assert status == 0
    assert out.splitlines() == [
        f"{firmware}: ESP32-S3 firmware, {firmware.stat().st_size} bytes, application at 0x10000",
        "esptool --chip esp32s3 --port /dev/ttyACM0 --baud 460800 erase-flash",
        f"esptool --chip esp32s3 --port /dev/ttyACM0 --baud 460800 write-flash 0x0 {firmware}",
    ]


def test_baud_is_passed_to_esptool(tmp_path, capsys, no_esptool):
    firmware = write(tmp_path, merged())
    _, out, _ = run(["--port", "/dev/ttyUSB0", "--firmware", firmware, "--baud", "115200",
                     "--dry-run"], capsys)
    assert "esptool --chip esp32s3 --port /dev/ttyUSB0 --baud 115200 erase-flash" in out


@pytest.fixture
def any_port(monkeypatch):
    """Every port path is there and free (the port checks have tests of their own)."""
    monkeypatch.setattr(flash, "check_port", lambda port: None)


def test_flash_runs_the_printed_calls_then_deploys(tmp_path, monkeypatch, capsys, any_port):
    firmware = write(tmp_path, merged())
    done = []
    monkeypatch.setattr(esptool, "main", lambda argv: done.append(("esptool", argv)))
    monkeypatch.setattr(deploy_module, "deploy",
                        lambda port, **kwargs: done.append(("deploy", port)))
    status, _, _ = run(["--port", "/dev/ttyACM0", "--firmware", firmware], capsys)
    assert status == 0
    common = ["--chip", "esp32s3", "--port", "/dev/ttyACM0", "--baud", "460800"]
    assert done == [("esptool", common + ["erase-flash"]),
                    ("esptool", common + ["write-flash", "0x0", str(firmware)]),
                    ("deploy", "/dev/ttyACM0")]


def test_esptool_accepts_the_calls(tmp_path):
    """esptool parses our arguments and gets as far as opening the (absent) port."""
    firmware = write(tmp_path, merged())
    for argv in flash.esptool_calls(str(tmp_path / "no-such-port"), firmware):
        with pytest.raises(FatalError, match="Could not open"):
            esptool.main(argv)


def test_merged_image_offset_is_the_esp32s3_bootloader_offset():
    assert flash.FLASH_OFFSET == 0x0


@pytest.mark.parametrize("boot, app, chip", [
    (ESP32FirmwareImage, ESP32FirmwareImage, "ESP32 "),
    (ESP32C3FirmwareImage, ESP32C3FirmwareImage, "ESP32-C3"),
    (ESP32S3FirmwareImage, ESP32C3FirmwareImage, "ESP32-C3"),
])
def test_another_chip_is_refused_naming_it(tmp_path, capsys, no_esptool, boot, app, chip):
    firmware = write(tmp_path, merged(boot, app))
    status, _, err = run(["--port", "/dev/ttyACM0", "--firmware", firmware], capsys)
    assert status == 1
    assert f"firmware for {chip}" in err
    assert "not for the ESP32-S3" in err


def test_wrong_magic_is_refused(tmp_path, capsys, no_esptool):
    firmware = write(tmp_path, b"\x7fELF" + merged()[4:])
    status, _, err = run(["--port", "/dev/ttyACM0", "--firmware", firmware], capsys)
    assert status == 1
    assert "not an ESP firmware image" in err and "0x7f" in err


def test_app_only_image_is_refused(tmp_path, capsys, no_esptool):
    firmware = write(tmp_path, esp_image(ESP32S3FirmwareImage) + b"\0" * 0x9000)
    status, _, err = run(["--port", "/dev/ttyACM0", "--firmware", firmware], capsys)
    assert status == 1
    assert "not a merged firmware" in err


@pytest.mark.parametrize("length, where", [
    (10, "before the header of the bootloader"),
    (100, "the bootloader needs"),
    (0x4000, "before the partition table"),
    (0x10010, "before the header of the application"),
    (-1, "the application at 0x10000 needs"),
])
def test_truncated_image_is_refused(tmp_path, capsys, no_esptool, length, where):
    firmware = write(tmp_path, merged()[:length])
    status, _, err = run(["--port", "/dev/ttyACM0", "--firmware", firmware], capsys)
    assert status == 1
    assert "truncated" in err and where in err


def test_missing_firmware_says_what_to_pass(capsys, no_esptool):
    status, _, err = run([], capsys)
    assert status == 2
    assert "FIRMWARE=path/to/firmware.bin" in err
    assert "ulab" in err and "ESP32-S3" in err


def test_a_port_that_is_not_there_is_named_before_esptool_runs(tmp_path, capsys, no_esptool):
    firmware = write(tmp_path, merged())
    status, _, err = run(["--port", "/dev/nonexistent", "--firmware", firmware], capsys)
    assert status == 2 and err.startswith("error: no such port: /dev/nonexistent")


def test_without_a_port_the_one_board_attached_is_flashed(tmp_path, monkeypatch, capsys,
                                                          any_port, attached):
    firmware = write(tmp_path, merged())
    done = []
    monkeypatch.setattr(esptool, "main", lambda argv: done.append(argv))
    monkeypatch.setattr(deploy_module, "deploy", lambda port, **kwargs: done.append(port))
    attached(("/dev/ttyACM3", 0x303A, 0x1001, "USB JTAG/serial debug unit"))
    status, _, _ = run(["--firmware", firmware], capsys)
    assert status == 0 and done[0][3] == "/dev/ttyACM3" and done[-1] == "/dev/ttyACM3"


def test_missing_firmware_file_is_reported(tmp_path, capsys, no_esptool):
    status, _, err = run(["--port", "/dev/ttyACM0", "--firmware", tmp_path / "nope.bin"],
                         capsys)
    assert status == 2
    assert "no such firmware file" in err


def test_a_failed_deploy_after_flashing_says_how_to_retry(tmp_path, monkeypatch, capsys,
                                                          any_port):
    firmware = write(tmp_path, merged())
    monkeypatch.setattr(esptool, "main", lambda argv: None)

    def no_board(port, **kwargs):
        raise deploy_module.DeployError("cannot open /dev/ttyACM0")
    monkeypatch.setattr(deploy_module, "deploy", no_board)
    status, _, err = run(["--port", "/dev/ttyACM0", "--firmware", firmware], capsys)
    assert status == 1
    assert "the firmware is written, but deploying failed: cannot open" in err
    assert "make deploy PORT=/dev/ttyACM0" in err
