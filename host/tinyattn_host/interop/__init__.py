"""PyTorch interop: state_dict .npz files to and from tinyattn model files."""
