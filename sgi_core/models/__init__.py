"""Loading any local model folder: what it may import, where its files come from, the device and
precision it runs at, and its ONNX export."""
