// safetensors checkpoints: round trips of every dtype, the exact layout
// (against bytes spelled out here and against files Python's safetensors
// wrote, test/unit/Inputs/make_safetensors.py), every kind of damaged file as
// one error line naming the file, and the atomic write.
#include "tc/Runtime/Safetensors.h"
#include "ErrorOf.h"
#include "tc/Support/Error.h"
#include "tc/Support/Json.h"
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tc;
namespace fs = std::filesystem;

namespace {

template <typename T> HostTensor tensorOf(DType t, std::vector<int64_t> shape, std::vector<T> v) {
  return HostTensor::fromBytes(t, std::move(shape), v.data(), v.size() * sizeof(T));
}

std::string readBytes(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  if (!f)
    throw std::runtime_error("cannot read " + p.string());
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void writeBytes(const fs::path &p, std::string_view bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string le64(uint64_t n) {
  std::string s;
  for (int b = 0; b < 8; ++b)
    s += char(n >> (8 * b) & 0xff);
  return s;
}

// A file from a header (unpadded) and data.
std::string fileOf(std::string_view json, std::string_view data = "") {
  return le64(json.size()) + std::string(json) + std::string(data);
}

fs::path inputs() { return fs::path(TC_SOURCE_DIR) / "test/unit/Inputs"; }

// A fresh directory per test, removed after it.
class SafetensorsFiles : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("tc-safetensors-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override {
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir);
  }
  // The names in `dir`: a failed write leaves no temporary file behind.
  std::vector<std::string> listing() const {
    std::vector<std::string> r;
    for (const auto &e : fs::directory_iterator(dir))
      r.push_back(e.path().filename().string());
    std::sort(r.begin(), r.end());
    return r;
  }
  fs::path dir;
};

void expectSame(const std::vector<NamedTensor> &got, const std::vector<NamedTensor> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].tensor.typeStr(), want[i].tensor.typeStr());
    const HostTensor &g = got[i].tensor, &w = want[i].tensor;
    EXPECT_EQ(std::vector<uint8_t>(g.bytes(), g.bytes() + g.byteSize()),
              std::vector<uint8_t>(w.bytes(), w.bytes() + w.byteSize()));
  }
}

const DType kAllTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                           DType::I32, DType::I16, DType::I8,  DType::U64,  DType::U32,
                           DType::U16, DType::U8,  DType::Bool};

// What make_safetensors.py saves into python-numpy.safetensors, in the order
// Python's safetensors sorts them (its header order).
std::vector<NamedTensor> pythonTensors() {
  return {
      {"u64", tensorOf<uint64_t>(DType::U64, {2}, {UINT64_MAX, 3})},
      {"i64", tensorOf<int64_t>(DType::I64, {2}, {INT64_MIN, INT64_MAX})},
      {"f64", tensorOf<double>(DType::F64, {1, 3}, {1.5, -2.25, 1e300})},
      {"empty", HostTensor(DType::F32, {0, 4})},
      {"f32", tensorOf<float>(DType::F32, {2, 3}, {-1, -0.5, 0, 0.5, 1, 1.5})},
      {"scalar", tensorOf<float>(DType::F32, {}, {42})},
      {"u32", tensorOf<uint32_t>(DType::U32, {1}, {4000000000u})},
      {"i32", tensorOf<int32_t>(DType::I32, {3}, {-7, 0, INT32_MAX})},
      {"f16", tensorOf<uint16_t>(DType::F16, {4}, {0x3c00, 0xb800, 0x7bff, 0})},
      {"u16", tensorOf<uint16_t>(DType::U16, {2}, {65535, 1})},
      {"i16", tensorOf<int16_t>(DType::I16, {2, 1}, {-32768, 32767})},
      {"i8", tensorOf<int8_t>(DType::I8, {3}, {-128, 5, 127})},
      {"u8", tensorOf<uint8_t>(DType::U8, {3}, {0, 200, 255})},
      {"bool", tensorOf<uint8_t>(DType::Bool, {3}, {1, 0, 1})},
  };
}

} // namespace

// ---- Layout ------------------------------------------------------------------

TEST(Safetensors, BytesAreTheSpecLayout) {
  // Header in the given order; data largest element first (w, s, b); JSON
  // compact, padded with spaces to a multiple of 8 (186 -> 192 bytes).
  std::vector<NamedTensor> ts = {{"w", tensorOf<float>(DType::F32, {2}, {1, 2})},
                                 {"b", tensorOf<int8_t>(DType::I8, {3}, {1, 2, 3})},
                                 {"s", tensorOf<uint16_t>(DType::F16, {}, {0x3c00})}};
  std::string json = "{\"__metadata__\":{\"k\":\"v\"},"
                     "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                     "\"b\":{\"dtype\":\"I8\",\"shape\":[3],\"data_offsets\":[10,13]},"
                     "\"s\":{\"dtype\":\"F16\",\"shape\":[],\"data_offsets\":[8,10]}}"
                     "      ";
  std::string want = std::string("\xc0\0\0\0\0\0\0\0", 8) + json +
                     std::string("\x00\x00\x80\x3f\x00\x00\x00\x40" // w: 1.0f, 2.0f
                                 "\x00\x3c"                         // s: f16 1.0
                                 "\x01\x02\x03",                    // b
                                 13);
  EXPECT_EQ(serializeSafetensors(ts, {{"k", "v"}}), want);
  EXPECT_EQ(serializeSafetensors({}), le64(8) + "{}      ");
}

TEST(Safetensors, ReadsWhatPythonWrote) {
  SafetensorsFile f = readSafetensors((inputs() / "python-numpy.safetensors").string());
  expectSame(f.tensors, pythonTensors());
  EXPECT_EQ(f.metadata, (std::map<std::string, std::string>{{"producer", "make_safetensors.py"}}));
  EXPECT_EQ(f.tensors[2].tensor.getDouble(2), 1e300);
  EXPECT_EQ(f.tensors[8].tensor.getDouble(2), 65504.0);

  SafetensorsFile b = readSafetensors((inputs() / "python-bf16.safetensors").string());
  ASSERT_EQ(b.tensors.size(), 1u);
  EXPECT_TRUE(b.metadata.empty());
  const HostTensor &t = b.tensors[0].tensor;
  EXPECT_EQ(t.typeStr(), "bf16[2,2]");
  EXPECT_EQ(t.getDouble(0), 1.0);
  EXPECT_EQ(t.getDouble(1), -2.0);
  EXPECT_EQ(t.getDouble(2), INFINITY);
  EXPECT_EQ(t.getDouble(3), 0.15625);
}

TEST(Safetensors, WritesWhatPythonWrites) {
  // The same tensors and metadata give Python's bytes exactly.
  EXPECT_EQ(serializeSafetensors(pythonTensors(), {{"producer", "make_safetensors.py"}}),
            readBytes(inputs() / "python-numpy.safetensors"));
  HostTensor bf16 = tensorOf<uint16_t>(DType::BF16, {2, 2}, {0x3f80, 0xc000, 0x7f80, 0x3e20});
  EXPECT_EQ(serializeSafetensors({{"bf16", bf16}}),
            readBytes(inputs() / "python-bf16.safetensors"));
}

// ---- Round trips -------------------------------------------------------------

TEST(Safetensors, RoundTripsEveryDType) {
  std::vector<NamedTensor> ts;
  for (DType t : kAllTypes) {
    std::string n(dtypeName(t));
    HostTensor x(t, {2, 3});
    for (int64_t i = 0; i < x.numElements(); ++i)
      x.setDouble(i, t == DType::Bool ? double(i % 2) : double(i) - (isSigned(t) ? 2.5 : 0));
    HostTensor scalar(t, {});
    scalar.setDouble(0, 1);
    ts.push_back({n, x});
    ts.push_back({n + ".scalar", scalar});
    ts.push_back({n + ".empty", HostTensor(t, {3, 0, 2})});
  }
  std::string bytes = serializeSafetensors(ts);
  SafetensorsFile f = parseSafetensors(bytes, "x.safetensors");
  expectSame(f.tensors, ts);
  EXPECT_TRUE(f.metadata.empty());
  // The data starts 8-byte aligned, and each tensor's at a multiple of its
  // element size.
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  JsonValue header = parseJson(std::string_view(bytes).substr(8, n));
  ASSERT_EQ(header.members.size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    const JsonValue *offsets = header.members[i].value.find("data_offsets");
    ASSERT_TRUE(offsets && offsets->items.size() == 2);
    EXPECT_EQ(*jsonInt64(offsets->items[0]) % int64_t(dtypeSize(ts[i].tensor.dtype())), 0)
        << ts[i].name;
  }
}

TEST(Safetensors, RoundTripsMetadataAndAwkwardNames) {
  std::vector<NamedTensor> ts = {
      {"quote\"back\\slash", HostTensor(DType::F32, {1})},
      {"line\nbreak\ttab\x01", HostTensor(DType::I8, {2})},
      {"unicode \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", HostTensor(DType::U8, {})},
      {"", HostTensor(DType::Bool, {1})},
      {"model.layers.0.weight", HostTensor(DType::F16, {4, 4})}};
  std::map<std::string, std::string> meta = {
      {"format", "pt"}, {"step", "1200"}, {"", "\"quoted\"\n"}, {"\xc3\xa9", ""}};
  SafetensorsFile f = parseSafetensors(serializeSafetensors(ts, meta), "x.safetensors");
  expectSame(f.tensors, ts);
  EXPECT_EQ(f.metadata, meta);
}

TEST(Safetensors, ReaderAcceptsOtherWritersSpelling) {
  // Whitespace, escapes, header order unlike the data order, no metadata.
  std::string json = "{\n \"b\\u00e9\" : {\"shape\": [ ], \"data_offsets\": [4, 5], "
                     "\"dtype\": \"U8\"},\r\n\t\"a\\/\\ud83d\\ude00\": {\"dtype\": \"I32\", "
                     "\"shape\": [1], \"data_offsets\": [0, 4]} }\t ";
  std::string bytes = fileOf(json, std::string("\x07\0\0\0\x09", 5));
  SafetensorsFile f = parseSafetensors(bytes, "x.safetensors");
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[0].name, "b\xc3\xa9");
  EXPECT_EQ(f.tensors[0].tensor.getInt(0), 9);
  EXPECT_EQ(f.tensors[1].name, "a/\xf0\x9f\x98\x80");
  EXPECT_EQ(f.tensors[1].tensor.getInt(0), 7);
}

TEST(Safetensors, WriterRejectsWhatItCannotWrite) {
  HostTensor x(DType::F32, {1});
  EXPECT_EQ(errorOf([&] { serializeSafetensors({{"a", x}, {"a", x}}); }),
            "duplicate tensor name \"a\"");
  EXPECT_EQ(errorOf([&] { serializeSafetensors({{"__metadata__", x}}); }),
            "tensor name \"__metadata__\" is reserved for the metadata");
  EXPECT_EQ(errorOf([&] { serializeSafetensors({{"s", HostTensor::fromStrings({1}, {"x"})}}); }),
            "tensor \"s\": str[1] has no safetensors dtype");
  EXPECT_EQ(errorOf([&] { serializeSafetensors({{"bad\xff", x}}); }),
            "tensor name \"bad\xff\" is not valid UTF-8");
  EXPECT_EQ(errorOf([&] { serializeSafetensors({}, {{"k", "\xc0\x80"}}); }),
            "metadata \"k\" is not valid UTF-8");
}

// ---- Damaged files -----------------------------------------------------------

TEST(Safetensors, EveryDefectIsOneLineNamingTheFile) {
  const std::string f32x2 = R"("dtype":"F32","shape":[2])";
  auto one = [&](std::string body) { return "{\"w\":{" + body + "}}"; };
  const std::string eight(8, '\0');
  struct Case {
    std::string bytes, error;
  };
  const Case cases[] = {
      {"", "bad.safetensors: truncated safetensors file (0 bytes, no header length)"},
      {std::string("\x10\0\0", 3),
       "bad.safetensors: truncated safetensors file (3 bytes, no header length)"},
      {le64(100) + "{}",
       "bad.safetensors: safetensors header length 100 runs past the end of the file (10 bytes; "
       "truncated?)"},
      {le64(uint64_t(1) << 40) + "{}",
       "bad.safetensors: safetensors header length 1099511627776 is over the 100 MB limit "
       "(corrupt file?)"},
      {le64(~uint64_t(0)), "is over the 100 MB limit"},
      {fileOf(""), "bad.safetensors: safetensors header does not start with '{'"},
      {fileOf("[1]"), "bad.safetensors: safetensors header does not start with '{'"},
      {fileOf("{\"w\":"),
       "bad.safetensors: safetensors header is not valid JSON: unexpected end of input at offset "
       "5"},
      {fileOf("{\"w\":{}} x"), "header is not valid JSON: unexpected 'x' after the value"},
      {fileOf("{\"w\":{},}"), "header is not valid JSON: expected a string key"},
      {fileOf("{\"w\xff\":{}}"), "header is not valid JSON: invalid UTF-8 in a string"},
      {fileOf("{\"w\":[" + std::string(100, '[')), "nesting deeper than 64 levels"},
      {fileOf("{\"w\":3}"), "bad.safetensors: tensor \"w\": not an object"},
      {fileOf(one(R"("shape":[2],"data_offsets":[0,8])"), eight),
       "bad.safetensors: tensor \"w\": missing dtype"},
      {fileOf(one(R"("dtype":"F32","data_offsets":[0,8])"), eight),
       "bad.safetensors: tensor \"w\": missing shape"},
      {fileOf(one(f32x2), eight), "bad.safetensors: tensor \"w\": missing data_offsets"},
      {fileOf(one(f32x2 + R"(,"data_offsets":[0,8],"extra":1)"), eight),
       "bad.safetensors: tensor \"w\": unexpected key \"extra\""},
      {fileOf(one(f32x2 + R"(,"data_offsets":[0,8],"shape":[2])"), eight),
       "bad.safetensors: tensor \"w\": duplicate shape"},
      {fileOf(one(R"("dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2])"), "\0\0"),
       "bad.safetensors: tensor \"w\": unsupported dtype \"F8_E4M3\""},
      {fileOf(one(R"("dtype":7,"shape":[2],"data_offsets":[0,2])"), "\0\0"),
       "bad.safetensors: tensor \"w\": dtype is not a string"},
      {fileOf(one(R"("dtype":"F32","shape":2,"data_offsets":[0,8])"), eight),
       "bad.safetensors: tensor \"w\": shape is not an array"},
      {fileOf(one(R"("dtype":"F32","shape":[-2],"data_offsets":[0,8])"), eight),
       "bad.safetensors: tensor \"w\": shape value -2 is negative"},
      {fileOf(one(R"("dtype":"F32","shape":[2.5],"data_offsets":[0,8])"), eight),
       "bad.safetensors: tensor \"w\": shape value 2.5 is not an integer"},
      {fileOf(one(R"("dtype":"F32","shape":["2"],"data_offsets":[0,8])"), eight),
       "bad.safetensors: tensor \"w\": shape holds a non-number"},
      {fileOf(one(R"("dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8])"), eight),
       "bad.safetensors: tensor \"w\": shape value 99999999999999999999 is too large"},
      {fileOf(one(R"("dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8])"), eight),
       "bad.safetensors: tensor \"w\": shape [4294967296, 4294967296] is too large"},
      {fileOf(one(f32x2 + R"(,"data_offsets":[0])"), eight),
       "bad.safetensors: tensor \"w\": data_offsets is not [BEGIN, END]"},
      {fileOf(one(f32x2 + R"(,"data_offsets":[8,0])"), eight),
       "bad.safetensors: tensor \"w\": data_offsets [8, 0] are reversed"},
      {fileOf(one(f32x2 + R"(,"data_offsets":[0,-8])"), eight),
       "bad.safetensors: tensor \"w\": data_offsets value -8 is negative"},
      {fileOf(one(f32x2 + R"(,"data_offsets":[0,16])"), eight),
       "bad.safetensors: tensor \"w\": data_offsets [0, 16] run past the end of the data (8 "
       "bytes)"},
      {fileOf(one(f32x2 + R"(,"data_offsets":[0,4])"), eight),
       "bad.safetensors: tensor \"w\": data_offsets [0, 4] hold 4 bytes, but f32[2] needs 8"},
      {fileOf(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
              std::string(12, '\0')),
       "bad.safetensors: tensors \"a\" and \"b\" overlap in the data"},
      {fileOf(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
              std::string(16, '\0')),
       "bad.safetensors: duplicate tensor \"a\""},
      {fileOf(one(f32x2 + R"(,"data_offsets":[4,12])"), std::string(12, '\0')),
       "bad.safetensors: data bytes [0, 4) belong to no tensor"},
      {fileOf(one(f32x2 + R"(,"data_offsets":[0,8])"), std::string(9, '\0')),
       "bad.safetensors: data bytes [8, 9) belong to no tensor"},
      {fileOf(R"({"__metadata__":{"k":1}})"),
       "bad.safetensors: __metadata__ \"k\" is not a string"},
      {fileOf(R"({"__metadata__":[]})"), "bad.safetensors: __metadata__ is not an object"},
      {fileOf(R"({"__metadata__":{"k":"a","k":"b"}})"),
       "bad.safetensors: duplicate __metadata__ key \"k\""},
      {fileOf(R"({"__metadata__":{},"__metadata__":{}})"),
       "bad.safetensors: duplicate __metadata__"},
      {fileOf("{\"line\\nbreak\":{}}"), "bad.safetensors: tensor \"line\\nbreak\": missing dtype"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.error);
    std::string e = errorOf([&] { parseSafetensors(c.bytes, "bad.safetensors"); });
    EXPECT_NE(e.find(c.error), std::string::npos) << e;
    EXPECT_TRUE(e.starts_with("bad.safetensors: ")) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(Safetensors, NoDamageCrashes) {
  // Every truncation and every byte's flips of a real file: an error or a
  // file that parses, never a crash (CI runs this under ASan).
  std::string good = readBytes(inputs() / "python-numpy.safetensors");
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_NE(errorOf([&] { parseSafetensors(good.substr(0, n), "t"); }), "") << n;
  for (size_t i = 0; i < good.size(); ++i)
    for (uint8_t flip : {0x01, 0x08, 0x80, 0xff}) {
      std::string b = good;
      b[i] = char(uint8_t(b[i]) ^ flip);
      try {
        parseSafetensors(b, "t");
      } catch (const Error &) {
      }
    }
}

TEST_F(SafetensorsFiles, ReadErrorsNameThePath) {
  std::string good = readBytes(inputs() / "python-numpy.safetensors");
  fs::path p = dir / "cut.safetensors";
  writeBytes(p, good.substr(0, good.size() - 1));
  EXPECT_EQ(errorOf([&] { readSafetensors(p.string()); }),
            p.string() + ": tensor \"bool\": data_offsets [122, 125] run past the end of the data "
                         "(124 bytes)");
  std::string missing = (dir / "missing.safetensors").string();
  EXPECT_NE(errorOf([&] { readSafetensors(missing); }).find(missing), std::string::npos);
}

// ---- Atomic writes -----------------------------------------------------------

TEST_F(SafetensorsFiles, WriteReplacesTheFile) {
  fs::path p = dir / "ckpt.safetensors";
  writeBytes(p, "old");
  std::vector<NamedTensor> ts = pythonTensors();
  writeSafetensors(p.string(), ts, {{"step", "1"}});
  SafetensorsFile f = readSafetensors(p.string());
  expectSame(f.tensors, ts);
  EXPECT_EQ(f.metadata.at("step"), "1");
  EXPECT_EQ(listing(), std::vector<std::string>{"ckpt.safetensors"});
  // An ordinary file: readable by others as the umask allows, not 0600.
  EXPECT_NE(fs::status(p).permissions() & fs::perms::owner_read, fs::perms::none);
  mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::group_read,
            (mask & S_IRGRP) ? fs::perms::none : fs::perms::group_read);
}

TEST_F(SafetensorsFiles, FailedWritesLeaveTheFileAlone) {
  fs::path p = dir / "ckpt.safetensors";
  writeSafetensors(p.string(), {{"a", HostTensor(DType::F32, {2})}});
  std::string before = readBytes(p);

  // A tensor with no safetensors form: nothing is written.
  EXPECT_EQ(
      errorOf([&] { writeSafetensors(p.string(), {{"s", HostTensor::fromStrings({1}, {"x"})}}); }),
      p.string() + ": tensor \"s\": str[1] has no safetensors dtype");
  EXPECT_EQ(readBytes(p), before);

  // The write itself fails half-way: a file size limit under the tensor's.
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  void (*oldHandler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string e =
      errorOf([&] { writeSafetensors(p.string(), {{"big", HostTensor(DType::F32, {1 << 16})}}); });
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, oldHandler);
  EXPECT_EQ(e, p.string() + ": write failed: File too large");
  EXPECT_EQ(readBytes(p), before);

  // The target is a directory: refused before anything is written.
  fs::create_directory(dir / "sub.safetensors");
  EXPECT_EQ(errorOf([&] { writeSafetensors((dir / "sub.safetensors").string(), {}); }),
            (dir / "sub.safetensors").string() + ": is a directory");
  EXPECT_EQ(listing(), (std::vector<std::string>{"ckpt.safetensors", "sub.safetensors"}));

  // No directory to put it in.
  std::string nowhere = (dir / "missing" / "ckpt.safetensors").string();
  EXPECT_EQ(errorOf([&] { writeSafetensors(nowhere, {}); }),
            nowhere + ": cannot create a temporary file beside it: No such file or directory");
}

TEST_F(SafetensorsFiles, UnwritableDirectory) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root writes into any directory";
  fs::path p = dir / "ckpt.safetensors";
  writeSafetensors(p.string(), {{"a", HostTensor(DType::F32, {2})}});
  std::string before = readBytes(p);
  fs::permissions(dir, fs::perms::owner_write, fs::perm_options::remove);
  EXPECT_EQ(errorOf([&] { writeSafetensors(p.string(), {}); }),
            p.string() + ": cannot create a temporary file beside it: Permission denied");
  EXPECT_EQ(readBytes(p), before);
}
