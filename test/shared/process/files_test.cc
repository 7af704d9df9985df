// Reading small files whole: the content byte for byte, a clear error for a
// file that cannot be read, and nothing (no throw) from TryReadFile.
#include "shared/process/files.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "test/support/test_support.h"

namespace ms::process {
namespace {

TEST(Files, ReadFileReturnsEveryByte) {
  test::TempDir dir;
  const std::string content("line one\r\n\0binary\xff", 19);
  test::WriteFile(dir.File("f"), content);
  EXPECT_EQ(ReadFile(dir.File("f")), content);
  EXPECT_EQ(TryReadFile(dir.File("f")), content);
}

TEST(Files, AMissingFileIsAnErrorOrNothing) {
  test::TempDir dir;
  try {
    ReadFile(dir.File("absent"));
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read " + dir.File("absent") + ": No such file or directory");
  }
  EXPECT_EQ(TryReadFile(dir.File("absent")), std::nullopt);
}

}  // namespace
}  // namespace ms::process
