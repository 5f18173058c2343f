//! hrts JNI glue.
