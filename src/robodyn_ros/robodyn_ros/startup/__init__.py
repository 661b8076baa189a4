"""What a process does before its first call: the kernels it will call compiled, or loaded from
the kernel cache, ahead (compile_ahead)."""
