// UTF-8 for text that leaves the process (log lines, answers labelled
// charset=utf-8) when part of it came from a client: valid UTF-8 passes
// unchanged, each byte of an invalid sequence becomes the text \xNN, as Go's
// %q shows it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ms::text {

// The length (1 to 4) of the RFC 3629 UTF-8 sequence that starts text at
// `pos` (no overlong forms, surrogates or code points above U+10FFFF), or 0
// when the bytes there are not one.
size_t Utf8SequenceLength(std::string_view text, size_t pos);

// RFC 3629 UTF-8 throughout.
bool IsValidUtf8(std::string_view text);

// `text` with every byte that is not part of a valid sequence written as
// \xNN (four ASCII characters); valid text is returned unchanged.
std::string SanitizeUtf8(std::string_view text);

}  // namespace ms::text
