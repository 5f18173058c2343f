//! TSC reliability evaluation (WTMLIB). STUB.
