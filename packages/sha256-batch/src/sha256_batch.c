// Many SHA-256 digests per call. Hashing one short message through node:crypto costs ~0.2 µs, almost
// all of it the call, not the hash; a Merkle tree of a 10,000-entry block is ~20,000 of them. Here
// each costs the hash alone (~0.05 µs per 64-byte block with SHA-NI), through the OpenSSL that Node
// itself carries and exports (its SHA256_* functions pick SHA-NI/AVX2 at run time). The message
// formats (leaves, inner nodes) are the caller's; this only hashes.
#include <node_api.h>
#include <openssl/sha.h>
#include <stdint.h>

#define DIGEST 32

static int bytes_of(napi_env env, napi_value value, uint8_t **data, size_t *length) {
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, value, &type, length, (void **)data, &buffer, &offset) != napi_ok ||
      type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "expected a Uint8Array");
    return 0;
  }
  return 1;
}

// The call's three arguments, or a TypeError that shows how it is called.
static int three_arguments(napi_env env, napi_callback_info info, napi_value argv[3], const char *usage) {
  size_t argc = 3;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 3) {
    napi_throw_type_error(env, NULL, usage);
    return 0;
  }
  return 1;
}

// hashMany(input: Uint8Array, bounds: Uint32Array, out: Uint8Array): message k is
// input[bounds[2k] .. bounds[2k + 1]); its digest goes to out[32k .. 32k + 32).
static napi_value hash_many(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!three_arguments(env, info, argv, "hashMany(input, bounds, out)")) return NULL;
  uint8_t *input, *out;
  size_t input_length, out_length, bounds_length;
  uint32_t *bounds;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  if (!bytes_of(env, argv[0], &input, &input_length) || !bytes_of(env, argv[2], &out, &out_length)) return NULL;
  if (napi_get_typedarray_info(env, argv[1], &type, &bounds_length, (void **)&bounds, &buffer, &offset) != napi_ok ||
      type != napi_uint32_array || bounds_length % 2 != 0) {
    napi_throw_type_error(env, NULL, "bounds: expected a Uint32Array of start, end pairs");
    return NULL;
  }
  size_t count = bounds_length / 2;
  if (out_length / DIGEST < count) {
    napi_throw_range_error(env, NULL, "out holds fewer digests than bounds has messages");
    return NULL;
  }
  for (size_t k = 0; k < count; k++) {
    if (bounds[2 * k] > bounds[2 * k + 1] || bounds[2 * k + 1] > input_length) {
      napi_throw_range_error(env, NULL, "every message must lie within input, its start at most its end");
      return NULL;
    }
  }
  for (size_t k = 0; k < count; k++) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, input + bounds[2 * k], bounds[2 * k + 1] - bounds[2 * k]);
    SHA256_Final(out + k * DIGEST, &context);
  }
  return NULL;
}

// hashPairs(level: Uint8Array, pairs: number, out: Uint8Array): the RFC 9162 inner nodes
// SHA-256(0x01 ‖ left ‖ right) of the first `pairs` pairs of 32-byte nodes of `level`, into `out`.
static napi_value hash_pairs(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!three_arguments(env, info, argv, "hashPairs(level, pairs, out)")) return NULL;
  uint8_t *level, *out;
  size_t level_length, out_length;
  int64_t pairs;
  if (!bytes_of(env, argv[0], &level, &level_length) || !bytes_of(env, argv[2], &out, &out_length)) return NULL;
  if (napi_get_value_int64(env, argv[1], &pairs) != napi_ok || pairs < 0 ||
      (uint64_t)pairs > level_length / (2 * DIGEST) || (uint64_t)pairs > out_length / DIGEST) {
    napi_throw_range_error(env, NULL, "pairs: a count that level and out both hold");
    return NULL;
  }
  static const uint8_t node_prefix = 1;
  for (int64_t pair = 0; pair < pairs; pair++) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, &node_prefix, 1);
    SHA256_Update(&context, level + pair * 2 * DIGEST, 2 * DIGEST);
    SHA256_Final(out + pair * DIGEST, &context);
  }
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value function;
  napi_create_function(env, "hashMany", NAPI_AUTO_LENGTH, hash_many, NULL, &function);
  napi_set_named_property(env, exports, "hashMany", function);
  napi_create_function(env, "hashPairs", NAPI_AUTO_LENGTH, hash_pairs, NULL, &function);
  napi_set_named_property(env, exports, "hashPairs", function);
  return exports;
}
