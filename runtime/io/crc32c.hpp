// CRC-32C (Castagnoli), the checksum that frames TFRecord files such as
// TensorBoard event files. Written here because Debian packages no library
// for it that we could depend on (zlib's crc32 uses another polynomial), and a
// table-driven version is a few lines.
#pragma once
#include <cstddef>
#include <cstdint>

namespace drun::io {

// CRC-32C of `size` bytes at `data` (reflected polynomial 0x82F63B78).
uint32_t crc32c(const void* data, size_t size);

// The form TFRecord stores: a CRC of data that itself holds CRCs is weak, so
// TensorFlow rotates and offsets it.
inline uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace drun::io
