// JPEG through libjpeg-turbo's libjpeg API. libjpeg reports a fatal error by
// calling error_exit, which must not return; here it longjmps back to
// run_decoder(), whose frame holds no C++ object (everything lives in the
// Decoder), so the jump skips only libjpeg's own C frames.
// jpeglib.h uses size_t and FILE without including their headers.
#include <cstddef>
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <csetjmp>

#include "base/options.hpp"
#include "data/image_codecs.hpp"

namespace drun::data {

namespace {

struct ErrorManager {
  jpeg_error_mgr mgr;  // first: libjpeg sees a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void fail(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings (level -1) about damaged data are ignored as PIL ignores them, all
// but a file that ends early: PIL refuses truncated images, and so do we.
void on_message(j_common_ptr cinfo, int level) {
  if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) fail(cinfo);
}

struct Decoder {
  ErrorManager errors{};
  jpeg_decompress_struct cinfo{};
  std::span<const uint8_t> bytes;
  const PlanDecode* plan = nullptr;
  DecodedRegion out;
  std::vector<uint8_t> cmyk_row;

  Decoder() {
    cinfo.err = jpeg_std_error(&errors.mgr);
    errors.mgr.error_exit = fail;
    errors.mgr.emit_message = on_message;
  }
  // Safe before jpeg_create_decompress too: it frees nothing then.
  ~Decoder() { jpeg_destroy_decompress(&cinfo); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  void decode();
  void read_rows(int64_t first, int64_t count);
};

// Adobe's CMYK JPEGs store inverted inks: R = C * K / 255 with C, K as stored.
void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, int64_t pixels) {
  for (int64_t i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    const int k = cmyk[3];
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<uint8_t>((cmyk[c] * k + 127) / 255);
  }
}

void Decoder::decode() {
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  const DecodePlan p = (*plan)(cinfo.image_width, cinfo.image_height);
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  cinfo.scale_num = 1;
  cinfo.scale_denom = static_cast<unsigned>(p.shrink);
  jpeg_start_decompress(&cinfo);

  // The plan's rectangle at the decoded scale, rounded outwards.
  const int64_t s = p.shrink, w = cinfo.output_width, h = cinfo.output_height;
  const int64_t x0 = std::clamp<int64_t>(p.need.x0 / s, 0, w);
  const int64_t x1 = std::clamp<int64_t>((p.need.x1 + s - 1) / s, x0, w);
  const int64_t y0 = std::clamp<int64_t>(p.need.y0 / s, 0, h);
  const int64_t y1 = std::clamp<int64_t>((p.need.y1 + s - 1) / s, y0, h);
  JDIMENSION left = static_cast<JDIMENSION>(x0), cols = static_cast<JDIMENSION>(x1 - x0);
  // Widens the columns to whole iMCUs; nothing to gain when all are wanted.
  if (cols > 0 && cols < cinfo.output_width) jpeg_crop_scanline(&cinfo, &left, &cols);
  out.x0 = left;
  out.y0 = y0;
  out.shrink = p.shrink;
  out.image.width = cinfo.output_width;  // the cropped width
  out.image.height = y1 - y0;
  out.image.pixels.resize(static_cast<size_t>(out.image.width * out.image.height * 3));
  if (cmyk) cmyk_row.resize(static_cast<size_t>(out.image.width * 4));
  if (y0 > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(y0));
  read_rows(0, y1 - y0);
  // The rows below y1 are never read: jpeg_destroy_decompress ends it anyway.
}

void Decoder::read_rows(int64_t first, int64_t count) {
  const int64_t stride = out.image.width * 3;
  for (int64_t r = first; r < first + count; ++r) {
    uint8_t* row = out.image.pixels.data() + r * stride;
    JSAMPROW target = cmyk_row.empty() ? row : cmyk_row.data();
    if (jpeg_read_scanlines(&cinfo, &target, 1) != 1) {
      // Suspension cannot happen with a memory source; treat it as truncation.
      cinfo.err->msg_code = JWRN_JPEG_EOF;
      fail(reinterpret_cast<j_common_ptr>(&cinfo));
    }
    if (!cmyk_row.empty()) cmyk_to_rgb(cmyk_row.data(), row, out.image.width);
  }
}

// false after a libjpeg error, whose text is then in d.errors.message. Nothing
// in this frame needs destroying, so longjmp-ing into it is safe.
bool run_decoder(Decoder& d) {
  if (setjmp(d.errors.jump)) return false;
  d.decode();
  return true;
}

}  // namespace

DecodedRegion decode_jpeg(std::span<const uint8_t> bytes, const std::string& path,
                          const PlanDecode& plan) {
  Decoder d;
  d.bytes = bytes;
  d.plan = &plan;
  if (!run_decoder(d)) throw UsageError(path + ": corrupt JPEG (" + d.errors.message + ")");
  return std::move(d.out);
}

}  // namespace drun::data
