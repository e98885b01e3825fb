"""The integer kernels' constants that the host's reference uses too: the softmax's exp tables
and units, the LayerNorm kernel's fixed point and limits.

Plain Python: tinyattn_host.reference.int8 and int8_encoder load this very file
(tinyattn_host.device_modules); the kernels import it (kernels_attend.py keeps EXP_LIMIT as a const()
for its viper loop, tests/host/test_kernel_fields.py holds the two equal).
"""

EXP_HI = (  # round(32768 * exp(-k / 8)), k = 0..88; the next would round to 0
    32768, 28918, 25520, 22521, 19875, 17539, 15479, 13660, 12055, 10638, 9388, 8285, 7312,
    6452, 5694, 5025, 4435, 3914, 3454, 3048, 2690, 2374, 2095, 1849, 1631, 1440, 1271, 1121,
    990, 873, 771, 680, 600, 530, 467, 412, 364, 321, 283, 250, 221, 195, 172, 152, 134, 118,
    104, 92, 81, 72, 63, 56, 49, 43, 38, 34, 30, 26, 23, 21, 18, 16, 14, 12, 11, 10, 9, 8, 7,
    6, 5, 5, 4, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1)
EXP_LO = (  # round(32768 * exp(-j / 256)), j = 0..31
    32768, 32640, 32513, 32386, 32260, 32134, 32009, 31884, 31760, 31636, 31513, 31390, 31267,
    31146, 31024, 30903, 30783, 30663, 30543, 30424, 30305, 30187, 30070, 29952, 29836, 29719,
    29603, 29488, 29373, 29259, 29144, 29031)
EXP_STEPS = 256
"""Softmax index units per nat: exp(-idx / 256) = EXP_HI[idx >> 5] * EXP_LO[idx & 31] / 2^30."""
EXP_LIMIT = 2848  # 32 * len(EXP_HI)
"""Index 2848 (11.1 nats below the row maximum) and beyond: exp is 0."""
PROB_ONE = 32768
"""1.0 in the probabilities' Q0.15."""


NORM_FRACTION = 12
"""z = xhat 2^12 in the LayerNorm kernel."""
MAX_NORM_WIDTH = 256
"""Longest LayerNorm row: V + eps_q must stay below 2^31 (16384 E^2 + 2^30 - 1)."""
MAX_EPS = 1073741823
"""eps_q, in units of V, is at most 2^30 - 1 (and at least 1)."""
