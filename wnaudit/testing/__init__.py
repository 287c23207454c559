"""Small real models for tests, benchmarks and ``wnaudit bench`` demos (need torch)."""
