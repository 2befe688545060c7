// HostTensor conversions and tensor files (.pb TensorProto, .npy): round
// trips, every typed field, and corrupt input as errors naming the file.
#include "tc/Runtime/TensorIO.h"
#include "onnx/onnx_pb.h"
#include "tc/Support/Error.h"
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>

using namespace tc;

namespace {

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

// A tensor of `t` holding small distinct values (0/1 for bool).
HostTensor sample(DType t, std::vector<int64_t> shape) {
  HostTensor r(t, std::move(shape));
  for (int64_t i = 0; i < r.numElements(); ++i)
    r.setDouble(i, t == DType::Bool ? double(i % 2)
                                    : double(i % 7) - (isSigned(t) ? 3 : 0) + 0.5 * isFloat(t));
  return r;
}

const DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                           DType::I32, DType::I16, DType::I8,   DType::U64, DType::U32,
                           DType::U16, DType::U8,  DType::Bool};

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() / ("tc-tensorio-" + name)).string();
}

} // namespace

TEST(HostTensor, ConversionsClampAndRound) {
  HostTensor i8(DType::I8, {4});
  i8.setDouble(0, 1000), i8.setDouble(1, -1000), i8.setDouble(2, NAN), i8.setDouble(3, -2.7);
  EXPECT_EQ(i8.getInt(0), 127);
  EXPECT_EQ(i8.getInt(1), -128);
  EXPECT_EQ(i8.getInt(2), 0);
  EXPECT_EQ(i8.getInt(3), -2);
  HostTensor u64(DType::U64, {3});
  u64.setDouble(0, 1e30), u64.setDouble(1, -1), u64.setDouble(2, INFINITY);
  EXPECT_EQ(uint64_t(u64.getInt(0)), UINT64_MAX);
  EXPECT_EQ(u64.getInt(1), 0);
  EXPECT_EQ(uint64_t(u64.getInt(2)), UINT64_MAX);
  EXPECT_EQ(u64.getDouble(0), 18446744073709551616.0);
  HostTensor i64(DType::I64, {2});
  i64.setDouble(0, 9.3e18), i64.setDouble(1, -INFINITY);
  EXPECT_EQ(i64.getInt(0), INT64_MAX);
  EXPECT_EQ(i64.getInt(1), INT64_MIN);
  HostTensor f(DType::F32, {2});
  f.setDouble(0, 1e39), f.setDouble(1, 0.1);
  EXPECT_EQ(f.getDouble(0), INFINITY);
  EXPECT_EQ(f.getDouble(1), double(0.1f));
  EXPECT_EQ(f.getInt(0), INT64_MAX);
  HostTensor b(DType::Bool, {2});
  b.setDouble(0, NAN), b.setInt(1, 0);
  EXPECT_EQ(b.getInt(0), 1);
  EXPECT_EQ(b.getInt(1), 0);
  EXPECT_EQ(roundToFloatDType(1.0 / 3, DType::BF16), 0.333984375);
  EXPECT_EQ(roundToFloatDType(70000, DType::F16), INFINITY);
}

TEST(HostTensor, ChecksSizesBeforeAllocating) {
  EXPECT_EQ(errorOf([] { HostTensor(DType::F32, {2, -1}); }), "invalid tensor dimension -1");
  EXPECT_EQ(errorOf([] { HostTensor(DType::F32, {int64_t(1) << 40, int64_t(1) << 40}); }),
            "tensor f32[1099511627776,1099511627776] is too large");
  uint8_t bytes[4] = {};
  EXPECT_EQ(errorOf([&] { HostTensor::fromBytes(DType::F32, {int64_t(1) << 40}, bytes, 4); }),
            "f32[1099511627776] needs 4398046511104 bytes of data, got 4");
  uint8_t bools[3] = {0, 1, 7};
  HostTensor t = HostTensor::fromBytes(DType::Bool, {3}, bools, 3);
  EXPECT_EQ(t.bytes()[2], 1); // normalized
  HostTensor empty(DType::F32, {0, 5});
  EXPECT_EQ(empty.numElements(), 0);
  EXPECT_EQ(empty.byteSize(), 0u);
}

TEST(HostTensor, PlaceColumnsBesideEachOther) {
  float a[4] = {1, 2, 3, 4}, b[2] = {5, 6};
  HostTensor wide(DType::F32, {2, 3}); // zero-filled
  placeColumns(wide, HostTensor::fromBytes(DType::F32, {2, 2}, a, sizeof a), 0);
  placeColumns(wide, HostTensor::fromBytes(DType::F32, {2, 1}, b, sizeof b), 2);
  const float *w = reinterpret_cast<const float *>(wide.bytes());
  EXPECT_EQ(std::vector<float>(w, w + 6), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  HostTensor row(DType::F32, {4});
  placeColumns(row, HostTensor::fromBytes(DType::F32, {2}, b, sizeof b), 1); // 1-D: one row
  const float *r = reinterpret_cast<const float *>(row.bytes());
  EXPECT_EQ(std::vector<float>(r, r + 4), (std::vector<float>{0, 5, 6, 0}));
  EXPECT_EQ(errorOf([&] { placeColumns(wide, HostTensor(DType::F32, {2, 2}), 2); }),
            "placeColumns: f32[2,2] at column 2 of f32[2,3]");
  EXPECT_EQ(errorOf([&] { placeColumns(wide, HostTensor(DType::F16, {2, 1}), 0); }),
            "placeColumns: f16[2,1] at column 0 of f32[2,3]");
}

// ---- TensorProto -------------------------------------------------------------

TEST(TensorProto, RoundTripsEveryDType) {
  for (DType t : kAllTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3}, {}, {0, 4}}) {
      HostTensor x = sample(t, shape);
      NamedTensor r = parseTensorProto(serializeTensorProto(x, "onnx::x"), "x.pb");
      EXPECT_EQ(r.name, "onnx::x");
      EXPECT_TRUE(r.tensor.sameType(x)) << x.typeStr() << " vs " << r.tensor.typeStr();
      EXPECT_TRUE(x.byteSize() == 0 || !std::memcmp(r.tensor.bytes(), x.bytes(), x.byteSize()))
          << x.typeStr();
    }
  }
}

TEST(TensorProto, ReadsTypedFields) {
  auto parse = [](const onnx::TensorProto &p) {
    return parseTensorProto(p.SerializeAsString(), "t.pb").tensor;
  };
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(2);
  p.add_float_data(1.5f), p.add_float_data(-2);
  HostTensor f = parse(p);
  EXPECT_EQ(f.typeStr(), "f32[2]");
  EXPECT_EQ(f.getDouble(1), -2);

  onnx::TensorProto h; // f16 bit patterns in int32_data
  h.set_data_type(onnx::TensorProto::FLOAT16);
  h.add_dims(2);
  h.add_int32_data(0x3C00), h.add_int32_data(0xC000);
  HostTensor hf = parse(h);
  EXPECT_EQ(hf.getDouble(0), 1.0);
  EXPECT_EQ(hf.getDouble(1), -2.0);

  onnx::TensorProto bf;
  bf.set_data_type(onnx::TensorProto::BFLOAT16);
  bf.add_int32_data(0x3FC0); // scalar 1.5
  EXPECT_EQ(parse(bf).getDouble(0), 1.5);

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(3);
  b.add_int32_data(0), b.add_int32_data(1), b.add_int32_data(5);
  HostTensor bt = parse(b);
  EXPECT_EQ(bt.bytes()[2], 1);

  for (auto [type, want] : {std::pair{onnx::TensorProto::INT8, -3.0},
                            {onnx::TensorProto::UINT8, 250.0},
                            {onnx::TensorProto::INT16, -300.0},
                            {onnx::TensorProto::UINT16, 60000.0},
                            {onnx::TensorProto::INT32, -70000.0}}) {
    onnx::TensorProto q;
    q.set_data_type(type);
    q.add_int32_data(int32_t(want));
    EXPECT_EQ(parse(q).getDouble(0), want) << type;
  }
  onnx::TensorProto i;
  i.set_data_type(onnx::TensorProto::INT64);
  i.add_int64_data(INT64_MIN);
  EXPECT_EQ(parse(i).getInt(0), INT64_MIN);
  onnx::TensorProto d;
  d.set_data_type(onnx::TensorProto::DOUBLE);
  d.add_double_data(0.1);
  EXPECT_EQ(parse(d).getDouble(0), 0.1);
  onnx::TensorProto u;
  u.set_data_type(onnx::TensorProto::UINT32);
  u.add_uint64_data(4000000000u);
  EXPECT_EQ(parse(u).getDouble(0), 4e9);
  onnx::TensorProto u8;
  u8.set_data_type(onnx::TensorProto::UINT64);
  u8.add_uint64_data(UINT64_MAX);
  EXPECT_EQ(uint64_t(parse(u8).getInt(0)), UINT64_MAX);
}

TEST(TensorProto, RejectsCorruptData) {
  auto err = [](const std::string &bytes) {
    return errorOf([&] { parseTensorProto(bytes, "bad.pb"); });
  };
  EXPECT_EQ(err(""), "bad.pb: empty file (expected an ONNX TensorProto)");
  EXPECT_EQ(err("\xff\xff\xff\xff garbage"),
            "bad.pb: not a valid ONNX TensorProto (truncated or corrupt)");
  std::string good = serializeTensorProto(sample(DType::F32, {4, 4}), "x");
  EXPECT_EQ(err(good.substr(0, good.size() - 5)),
            "bad.pb: not a valid ONNX TensorProto (truncated or corrupt)");

  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(3);
  p.set_raw_data(std::string(8, '\0'));
  EXPECT_EQ(err(p.SerializeAsString()), "bad.pb: f32[3] needs 12 bytes of data, got 8");
  // A huge claim with little data is refused before anything is allocated.
  p.clear_dims();
  p.add_dims(int64_t(1) << 40);
  EXPECT_EQ(err(p.SerializeAsString()), "bad.pb: f32[1099511627776] needs 4398046511104 bytes "
                                        "of data, got 8");
  p.add_dims(int64_t(1) << 40);
  EXPECT_EQ(err(p.SerializeAsString()), "bad.pb: f32[1099511627776,1099511627776] is too large");
  p.clear_dims();
  p.add_dims(-2);
  EXPECT_EQ(err(p.SerializeAsString()), "bad.pb: invalid dimension -2");
  onnx::TensorProto q;
  q.set_data_type(onnx::TensorProto::INT64);
  q.add_dims(1000000000);
  q.add_int64_data(1);
  EXPECT_EQ(err(q.SerializeAsString()),
            "bad.pb: i64[1000000000] needs 1000000000 values, but int64_data has 1");
  // STRING: only string_data, one value per element.
  q.set_data_type(onnx::TensorProto::STRING);
  EXPECT_EQ(err(q.SerializeAsString()),
            "bad.pb: str[1000000000] needs 1000000000 values, but string_data has 0");
  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_dims(1);
  s.set_raw_data("abc");
  EXPECT_EQ(err(s.SerializeAsString()),
            "bad.pb: a STRING tensor must hold its elements in string_data, not raw_data");
  q.set_data_type(onnx::TensorProto::COMPLEX64);
  EXPECT_EQ(err(q.SerializeAsString()), "bad.pb: unsupported TensorProto element type COMPLEX64");
  q.set_data_type(onnx::TensorProto::FLOAT);
  q.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(err(q.SerializeAsString()), "bad.pb: tensors with external data are not supported");
}

TEST(TensorProto, FilesNameThemselvesInErrors) {
  std::string path = tempPath("corrupt.pb");
  std::ofstream(path, std::ios::binary) << "\x0a\xff\xff";
  EXPECT_EQ(errorOf([&] { readTensorFile(path); }),
            path + ": not a valid ONNX TensorProto (truncated or corrupt)");
  std::string ok = tempPath("ok.pb");
  writeTensorFile(ok, sample(DType::I32, {3}), "ids");
  NamedTensor r = readTensorFile(ok);
  EXPECT_EQ(r.name, "ids");
  EXPECT_EQ(r.tensor.typeStr(), "i32[3]");
  std::filesystem::remove(path);
  std::filesystem::remove(ok);
  EXPECT_NE(errorOf([&] { readTensorFile(tempPath("missing.pb")); }).find("missing.pb"),
            std::string::npos);
}

// ---- NumPy -------------------------------------------------------------------

TEST(Npy, RoundTripsEveryNumpyDType) {
  for (DType t : kAllTypes) {
    if (t == DType::BF16)
      continue;
    for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3}, {5}, {}, {0}}) {
      HostTensor x = sample(t, shape);
      std::string bytes = serializeNpy(x);
      // header: magic, version 1.0, length; the data starts 64-byte aligned
      EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
      EXPECT_EQ((bytes.size() - x.byteSize()) % 64, 0u);
      HostTensor r = parseNpy(bytes, "x.npy");
      EXPECT_TRUE(r.sameType(x)) << x.typeStr() << " vs " << r.typeStr();
      EXPECT_TRUE(x.byteSize() == 0 || !std::memcmp(r.bytes(), x.bytes(), x.byteSize()));
    }
  }
  EXPECT_EQ(errorOf([] { serializeNpy(sample(DType::BF16, {2})); }),
            "bf16 has no NumPy dtype (write a .pb file instead)");
}

TEST(Npy, ReadsNumpyHeaders) {
  auto npy = [](int version, std::string dict, std::string data) {
    std::string h = std::string("\x93NUMPY", 6) + char(version) + '\0';
    size_t len = dict.size();
    for (int i = 0; i < (version == 1 ? 2 : 4); ++i)
      h += char((len >> (8 * i)) & 0xff);
    return h + dict + data;
  };
  float vals[2] = {1.5f, -2.f};
  std::string data(reinterpret_cast<const char *>(vals), 8);
  // As numpy writes it (version 1, trailing comma and spaces).
  HostTensor a = parseNpy(
      npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }      \n", data), "a.npy");
  EXPECT_EQ(a.typeStr(), "f32[2]");
  EXPECT_EQ(a.getDouble(1), -2);
  // Version 2, other key order, double quotes, a 2-D shape.
  HostTensor b = parseNpy(
      npy(2, "{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<f4\"}\n", data), "b.npy");
  EXPECT_EQ(b.typeStr(), "f32[1,2]");
  // Big-endian data is byte-swapped.
  std::string be = {0x3f, char(0xc0), 0, 0};
  HostTensor c =
      parseNpy(npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (), }\n", be), "c.npy");
  EXPECT_EQ(c.getDouble(0), 1.5);

  auto err = [](const std::string &bytes) { return errorOf([&] { parseNpy(bytes, "d.npy"); }); };
  EXPECT_EQ(err("PK\x03\x04 not npy"), "d.npy: not a NumPy .npy file (bad magic)");
  EXPECT_EQ(err(npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", data)),
            "d.npy: Fortran-order arrays are not supported (save a C-order array)");
  EXPECT_EQ(err(npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n", data)),
            "d.npy: unsupported .npy dtype '<c8'");
  EXPECT_EQ(
      err(npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", data)),
      "d.npy: bad .npy header: structured dtypes are not supported");
  EXPECT_EQ(err(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", data)),
            "d.npy: f32[3] needs 12 bytes of data, got 8");
  EXPECT_EQ(
      err(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n",
              data)),
      "d.npy: bad .npy header: dimension too large");
  EXPECT_EQ(err(npy(1,
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, "
                    "4294967296), }\n",
                    data)),
            "d.npy: tensor f32[4294967296,4294967296,4294967296] is too large");
  EXPECT_EQ(err(npy(1, "{'descr': '<f4', 'shape': (2,)}\n", data)),
            "d.npy: bad .npy header: missing descr, fortran_order or shape");
  std::string truncated = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", "");
  EXPECT_EQ(err(truncated.substr(0, 30)), "d.npy: truncated .npy header");
  EXPECT_EQ(err(std::string("\x93NUMPY\x07\x00\x10\x00", 10)),
            "d.npy: unsupported .npy format version 7");
}
