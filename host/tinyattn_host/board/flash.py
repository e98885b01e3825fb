"""Put a MicroPython firmware on an ESP32-S3: check the image, erase, write with esptool, deploy.

    .venv/bin/python -m tinyattn_host flash --port /dev/ttyACM0 --firmware firmware.bin
                                            [--baud 460800] [--dry-run]

The firmware is a merged image as MicroPython's ESP32-S3 builds produce it (`firmware.bin`): the
bootloader at 0x0, the partition table at 0x8000, the application where that table says
(0x10000). It is written at 0x0, the ESP32-S3's bootloader offset. Before anything is written, the
file is checked: ESP image magic, the chip id in the image headers, and that the bootloader and
the application are complete.
"""

import shlex
import struct
from pathlib import Path

import esptool
from esptool.loader import ESPLoader
from esptool.targets import CHIP_DEFS, ESP32S3ROM
from esptool.util import FatalError
from mpremote.transport import TransportError

from ..errors import HostError, InputError, UsageError
from . import deploy as deploy_module
from .deploy import DeployError
from .ports import AUTO, check_port, choose

CHIP = "esp32s3"
FLASH_OFFSET = ESP32S3ROM.BOOTLOADER_FLASH_OFFSET  # 0x0: a merged image starts with the bootloader
PARTITION_TABLE_OFFSET = 0x8000  # ESP-IDF's default, which MicroPython keeps
DEFAULT_BAUD = 460800

IMAGE_HEADER_LEN = 24  # 8-byte common header + 16-byte extended header
CHIP_ID_OFFSET = 12  # little-endian uint16 in the extended header
PARTITION_ENTRY = struct.Struct("<2sBBII16sI")
PARTITION_MAGIC = b"\xaa\x50"
APP_PARTITION_TYPE = 0x00

FIRMWARE_HELP = (
    "a MicroPython firmware for the ESP32-S3 built with ulab (the merged firmware.bin). ulab's "
    "repository, github.com/v923z/micropython-ulab, documents in its README where compiled "
    "firmware can be found and how to build MicroPython with ulab as a user C module; the "
    "README's 'First board' section has the steps")


class ImageError(InputError):
    """The file is not a complete ESP32-S3 firmware image."""


class FlashError(HostError):
    """esptool failed, or the deploy after it did; the message says what to do."""


def chip_name(chip_id):
    """esptool's name for an image chip id, e.g. 9 -> 'ESP32-S3'."""
    for rom in CHIP_DEFS.values():
        if rom.IMAGE_CHIP_ID == chip_id:
            return rom.CHIP_NAME
    return f"an unknown chip (id {chip_id})"


def check_image(data):
    """Raise ImageError unless `data` is a whole merged ESP32-S3 firmware; return the app offset."""
    _check_esp32s3_image(data, FLASH_OFFSET, "the bootloader")
    app = _app_offset(data)
    _check_esp32s3_image(data, app, f"the application at {app:#x}")
    return app


def _check_esp32s3_image(data, start, what):
    if len(data) < start + IMAGE_HEADER_LEN:
        raise ImageError(f"truncated: the file ends at {len(data)} bytes, before the header of "
                         f"{what} ({IMAGE_HEADER_LEN} bytes from {start:#x})")
    if data[start] != ESPLoader.ESP_IMAGE_MAGIC:
        raise ImageError(f"not an ESP firmware image: {what} starts with {data[start]:#04x}, "
                         f"an image starts with {ESPLoader.ESP_IMAGE_MAGIC:#04x}")
    (chip_id,) = struct.unpack_from("<H", data, start + CHIP_ID_OFFSET)
    if chip_id != ESP32S3ROM.IMAGE_CHIP_ID:
        raise ImageError(f"this is a firmware for {chip_name(chip_id)} (image chip id "
                         f"{chip_id}), not for the ESP32-S3 (chip id {ESP32S3ROM.IMAGE_CHIP_ID})")
    end = _image_end(data, start)
    if end > len(data):
        raise ImageError(f"truncated: {what} needs {end - start} bytes from {start:#x}, "
                         f"the file ends at {len(data)} bytes")


def _image_end(data, start):
    """Offset just past an image: headers, segments, checksum padded to 16 bytes, SHA-256."""
    position = start + IMAGE_HEADER_LEN
    for _ in range(data[start + 1]):
        if position + 8 > len(data):
            return position + 8
        _, size = struct.unpack_from("<II", data, position)
        position += 8 + size
    position = (position // 16 + 1) * 16
    if data[start + IMAGE_HEADER_LEN - 1] == 1:  # append_digest
        position += 32
    return position


def _app_offset(data):
    """Offset of the first app partition in the partition table at 0x8000."""
    table = data[PARTITION_TABLE_OFFSET:PARTITION_TABLE_OFFSET + 0xC00]
    if len(table) < PARTITION_ENTRY.size:
        raise ImageError(f"truncated: the file ends at {len(data)} bytes, before the partition "
                         f"table at {PARTITION_TABLE_OFFSET:#x}; a MicroPython ESP32-S3 firmware "
                         f"holds the bootloader, the partition table and the application")
    for start in range(0, len(table) - PARTITION_ENTRY.size + 1, PARTITION_ENTRY.size):
        magic, kind, _, offset, _, _, _ = PARTITION_ENTRY.unpack_from(table, start)
        if magic != PARTITION_MAGIC:
            break
        if kind == APP_PARTITION_TYPE:
            return offset
    raise ImageError(f"no partition table with an app partition at {PARTITION_TABLE_OFFSET:#x}: "
                     f"this is not a merged firmware (MicroPython's firmware.bin, written at "
                     f"{FLASH_OFFSET:#x}); an application-only image needs a bootloader and a "
                     f"partition table beside it")


def esptool_calls(port, firmware, baud=DEFAULT_BAUD):
    """The argument lists for esptool.main: erase the whole flash, then write the firmware."""
    common = ["--chip", CHIP, "--port", port, "--baud", str(baud)]
    return [common + ["erase-flash"],
            common + ["write-flash", f"{FLASH_OFFSET:#x}", str(firmware)]]


def flash(port, firmware, baud=DEFAULT_BAUD, dry_run=False, deploy=True, out=print):
    """Check the firmware, then the port (None or auto: the one board attached), then erase
    and write with esptool, then deploy device/."""
    data = Path(firmware).read_bytes()
    app = check_image(data)
    out(f"{firmware}: ESP32-S3 firmware, {len(data)} bytes, application at {app:#x}")
    if b"ulab" not in data:
        out("note: the name 'ulab' appears nowhere in this firmware; tinyattn needs a firmware "
            "built with ulab")
    if dry_run:
        for argv in esptool_calls(port or "PORT", firmware, baud):
            out(shlex.join(["esptool", *argv]))
        return
    port = choose(port or AUTO)
    check_port(port)
    calls = esptool_calls(port, firmware, baud)
    for argv in calls:
        esptool.main(argv)
    if deploy:
        deploy_module.deploy(port, wait=20, out=out)


def flash_command(args):
    """The flash command: flash() with the command line's firmware, port and baud rate."""
    if not args.firmware:
        raise UsageError(f"make flash needs the firmware: FIRMWARE=path/to/firmware.bin, "
                         f"{FIRMWARE_HELP}")
    if not Path(args.firmware).is_file():
        raise UsageError(f"no such firmware file: {args.firmware}; it should be {FIRMWARE_HELP}")
    try:
        flash(args.port, args.firmware, args.baud, args.dry_run, deploy=not args.no_deploy)
    except ImageError as error:
        raise ImageError(f"refusing to flash {args.firmware}: {error}") from None
    except FatalError as error:
        raise FlashError(f"esptool: {error}; is the board in download mode? Hold BOOT, tap "
                         f"RESET, release BOOT, then try again") from None
    except (DeployError, TransportError) as error:
        raise FlashError(f"the firmware is written, but deploying failed: {error}; once the "
                         f"board is up: make deploy"
                         f"{' PORT=' + args.port if args.port else ''}") from None
    return 0
