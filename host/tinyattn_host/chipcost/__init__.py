"""What the int8 kernels cost on the ESP32-S3: their xtensawin code, loop by loop."""
