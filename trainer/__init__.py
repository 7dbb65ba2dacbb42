"""The reference TensorFlow trainer (installed by ``tierscope[trainer]``)."""
