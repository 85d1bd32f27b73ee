{
  "targets": [
    {
      "target_name": "sha256_batch",
      "sources": ["src/sha256_batch.c"],
      "cflags": ["-O2"],
      "defines": ["NAPI_VERSION=8", "OPENSSL_SUPPRESS_DEPRECATED"]
    }
  ]
}
