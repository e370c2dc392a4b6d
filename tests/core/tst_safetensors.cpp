// SPDX-License-Identifier: MIT
// Strict safetensors reader: hand-built valid/invalid files for every validation rule. The corpus of
// real files and the sharded-checkpoint index are tst_safetensors_index.cpp's.
#include "ckpt/formats/safetensors_format.h"

#include "safetensors_test_support.h"

#include <QtTest>

#include <algorithm>

using namespace testsupport;

namespace {

QByteArray lengthPrefix(quint64 n)
{
    QByteArray bytes(8, '\0');
    for (int i = 0; i < 8; ++i)
        bytes[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    return bytes;
}

/// 8-byte length + header JSON (space-padded to a multiple of 8 unless `pad` is false) + `dataBytes` of data.
QByteArray makeFile(QByteArray header, qsizetype dataBytes, bool pad = true)
{
    if (pad) {
        while (header.size() % 8)
            header += ' ';
    }
    QByteArray data(dataBytes, '\0');
    for (qsizetype i = 0; i < dataBytes; ++i)
        data[i] = static_cast<char>(i * 7 + 1);
    return lengthPrefix(static_cast<quint64>(header.size())) + header + data;
}

/// One tensor entry: "name":{"dtype":...,"shape":...,"data_offsets":[b,e]}.
QByteArray entry(const QByteArray& name, const QByteArray& dtype, const QByteArray& shape, quint64 begin, quint64 end)
{
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":["
        + QByteArray::number(begin) + "," + QByteArray::number(end) + "]}";
}

bool anyWarningContains(const ckpt::SafetensorsHeader& header, const QString& phrase)
{
    return std::any_of(header.warnings.begin(), header.warnings.end(),
                       [&](const std::string& w) { return QString::fromStdString(w).contains(phrase); });
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

private slots:
    void validFiles_data();
    void validFiles();
    void validDetails();
    void invalidFiles_data();
    void invalidFiles();
    void headerSizeLimit();
    void truncatedAndMutated();
    void readersAgree_data();
    void readersAgree();
    void dtypeBits();
};

void TestSafetensors::validFiles_data()
{
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<int>("tensors");
    QTest::addColumn<int>("metadata");
    QTest::addColumn<QString>("warning"); // a phrase one warning must contain; empty: no warnings at all

    QTest::newRow("single F32") << makeFile("{" + entry("a", "F32", "[2,3]", 0, 24) + "}", 24) << 1 << 0 << QString();
    QTest::newRow("scalar") << makeFile("{" + entry("step", "I64", "[]", 0, 8) + "}", 8) << 1 << 0 << QString();
    QTest::newRow("zero-size dim") << makeFile("{" + entry("e", "F32", "[0,5]", 0, 0) + "}", 0) << 1 << 0
                                   << QString();
    QTest::newRow("no tensors") << makeFile("{}", 0) << 0 << 0 << QString();
    QTest::newRow("reference empty file") << QByteArray::fromRawData("\x08\0\0\0\0\0\0\0{}      ", 16) << 0 << 0
                                          << QString();
    QTest::newRow("metadata") << makeFile(R"({"__metadata__":{"format":"pt","note":"x"},)"
                                          + entry("w", "BF16", "[4]", 0, 8) + "}",
                                          8)
                              << 1 << 2 << QString();
    QTest::newRow("metadata last") << makeFile("{" + entry("w", "U8", "[1]", 0, 1) + R"(,"__metadata__":{}})", 1)
                                   << 1 << 0 << QString();
    QTest::newRow("metadata null") << makeFile(R"({"__metadata__":null})", 0) << 0 << 0 << QStringLiteral("null");
    QTest::newRow("header order differs from data order")
        << makeFile("{" + entry("b", "F32", "[2]", 8, 16) + "," + entry("a", "F32", "[2]", 0, 8) + "}", 16) << 2 << 0
        << QString();
    QTest::newRow("zero-size tensors share offsets")
        << makeFile("{" + entry("z1", "F32", "[0]", 0, 0) + "," + entry("x", "F32", "[1]", 0, 4) + ","
                        + entry("z2", "F64", "[2,0]", 4, 4) + "," + entry("z3", "F64", "[0,2]", 4, 4) + "}",
                    4)
        << 4 << 0 << QString();
    QTest::newRow("leading whitespace") << makeFile(" \n\t{" + entry("a", "U8", "[2]", 0, 2) + "}", 2) << 1 << 0
                                        << QStringLiteral("starts with whitespace");
    QTest::newRow("trailing newline and tab")
        << makeFile("{" + entry("a", "U8", "[2]", 0, 2) + "}\r\n\t", 2) << 1 << 0 << QString();
    QTest::newRow("unpadded header") << makeFile("{" + entry("b", "U8", "[6]", 0, 6) + "}", 6, false) << 1 << 0
                                     << QStringLiteral("not a multiple of 8");
    QTest::newRow("misaligned data") << makeFile("{" + entry("a", "U8", "[1]", 0, 1) + ","
                                                     + entry("f", "F32", "[1]", 1, 5) + "}",
                                                 5)
                                     << 2 << 0 << QStringLiteral("not a multiple of its element size");
    QTest::newRow("F4 packed pair") << makeFile("{" + entry("q", "F4", "[2,3]", 0, 3) + "}", 3) << 1 << 0
                                    << QString();
    QTest::newRow("F6 four elements") << makeFile("{" + entry("q", "F6_E3M2", "[4]", 0, 3) + "}", 3) << 1 << 0
                                      << QString();
    QTest::newRow("C64") << makeFile("{" + entry("c", "C64", "[2]", 0, 16) + "}", 16) << 1 << 0 << QString();
    QTest::newRow("BOOL") << makeFile("{" + entry("m", "BOOL", "[3]", 0, 3) + "}", 3) << 1 << 0 << QString();
    QTest::newRow("unicode and escaped names")
        << makeFile("{" + entry("\xc3\xbc" "n\xc3\xaf" "code.w", "U8", "[1]", 0, 1) + ","
                        + entry("a\\\"b\\u00e9", "U8", "[1]", 1, 2) + "}",
                    2)
        << 2 << 0 << QString();
    QTest::newRow("empty tensor name") << makeFile("{" + entry("", "U8", "[1]", 0, 1) + "}", 1) << 1 << 0
                                       << QString();

    // One tensor of every dtype, 8 elements each, laid out as the reference writer does (descending alignment).
    static const char* const codes[] = {"U64",     "I64",     "F64",         "C64",         "F32", "U32",
                                        "I32",     "BF16",    "F16",         "U16",         "I16", "F8_E5M2FNUZ",
                                        "F8_E4M3FNUZ", "F8_E8M0", "F8_E4M3", "F8_E5M2", "I8",  "U8",
                                        "F6_E3M2", "F6_E2M3", "F4",          "BOOL"};
    QByteArray header = "{";
    quint64 offset = 0;
    for (const char* code : codes) {
        const quint64 bytes = static_cast<quint64>(ckpt::safetensorsDtypeBits(code)); // 8 elements × bits / 8
        if (header.size() > 1)
            header += ',';
        header += entry(QByteArray("t_") + code, code, "[8]", offset, offset + bytes);
        offset += bytes;
    }
    header += '}';
    QTest::newRow("every dtype") << makeFile(header, static_cast<qsizetype>(offset)) << 22 << 0 << QString();
}

void TestSafetensors::validFiles()
{
    QFETCH(QByteArray, file);
    QFETCH(int, tensors);
    QFETCH(int, metadata);
    QFETCH(QString, warning);

    const QString disagreement = headerReadersDisagree(file);
    QVERIFY2(disagreement.isNull(), qPrintable(disagreement));
    ckpt::SafetensorsHeader header;
    try {
        header = parse(file);
    } catch (const ckpt::FormatError& e) {
        QFAIL(e.what());
    }
    QCOMPARE(static_cast<int>(header.tensors.size()), tensors);
    QCOMPARE(static_cast<int>(header.metadata.size()), metadata);
    QString why;
    QVERIFY2(tilesData(header, static_cast<quint64>(file.size()), &why), qPrintable(why));
    for (const auto& t : header.tensors) {
        QVERIFY(!t.dtypeCode.empty());
        QVERIFY(ckpt::safetensorsDtypeBits(t.dtypeCode) > 0);
    }
    if (warning.isEmpty()) {
        QVERIFY2(header.warnings.empty(), header.warnings.empty() ? "" : header.warnings.front().c_str());
    } else {
        QVERIFY2(anyWarningContains(header, warning), qPrintable(QStringLiteral("no warning mentions: ") + warning));
    }
}

void TestSafetensors::validDetails()
{
    const QByteArray json = R"({"__metadata__":{"format":"pt","z":"last"},)" + entry("b.bias", "F16", "[3]", 24, 30)
        + "," + entry("a.weight", "F32", "[2,3]", 0, 24) + "," + entry("q", "F4", "[4]", 30, 32) + ","
        + entry("s", "I64", "[]", 32, 40) + "}";
    const QByteArray file = makeFile(json, 40);
    const ckpt::SafetensorsHeader header = parse(file);
    const quint64 dataStart = static_cast<quint64>(file.size()) - 40;
    QCOMPARE(header.headerSize + 8, dataStart);
    QCOMPARE(header.headerSize % 8, quint64(0));

    QCOMPARE(header.metadata.size(), std::size_t(2));
    QCOMPARE(header.metadata[0].first, std::string("format"));
    QCOMPARE(header.metadata[0].second, std::string("pt"));
    QCOMPARE(header.metadata[1].first, std::string("z"));
    QCOMPARE(header.metadata[1].second, std::string("last"));

    QCOMPARE(header.tensors.size(), std::size_t(4));
    const auto& b = header.tensors[0]; // header order, not data order
    QCOMPARE(b.name, std::string("b.bias"));
    QCOMPARE(b.dtypeCode, std::string("F16"));
    QVERIFY(b.dtype == ckpt::DType::Float16);
    QCOMPARE(b.shape, (std::vector<int64_t>{3}));
    QCOMPARE(b.begin, dataStart + 24);
    QCOMPARE(b.end, dataStart + 30);

    const auto& a = header.tensors[1];
    QCOMPARE(a.name, std::string("a.weight"));
    QVERIFY(a.dtype == ckpt::DType::Float32);
    QCOMPARE(a.shape, (std::vector<int64_t>{2, 3}));
    QCOMPARE(a.begin, dataStart);
    QCOMPARE(a.end, dataStart + 24);
    // The bytes at the absolute offsets are the tensor's (makeFile fills data byte i with i*7+1).
    QCOMPARE(static_cast<unsigned char>(file[static_cast<qsizetype>(a.begin) + 1]), static_cast<unsigned char>(8));

    const auto& q = header.tensors[2];
    QCOMPARE(q.dtypeCode, std::string("F4"));
    QVERIFY(q.dtype == ckpt::DType::Unknown);

    const auto& s = header.tensors[3];
    QVERIFY(s.dtype == ckpt::DType::Int64);
    QVERIFY(s.shape.empty());
    QCOMPARE(s.end, static_cast<quint64>(file.size()));
    QVERIFY(header.warnings.empty());
}

void TestSafetensors::invalidFiles_data()
{
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("phrase");

    const QByteArray u8x2 = entry("a", "U8", "[2]", 0, 2);
    auto oneTensor = [](const QByteArray& body) { return makeFile("{\"a\":" + body + "}", 8); };

    // The 8-byte length and its bounds.
    QTest::newRow("empty file") << QByteArray() << "too few for a safetensors file";
    QTest::newRow("7 bytes") << QByteArray(7, '\0') << "has 7 bytes, too few";
    QTest::newRow("length beyond file") << lengthPrefix(1234567890123ULL) + QByteArray(4088, ' ')
                                        << "header length 1234567890123 exceeds the file size 4096";
    QTest::newRow("length 2^64-1") << lengthPrefix(~0ULL) + "{}" << "exceeds the file size 10";
    QTest::newRow("length one past the end") << lengthPrefix(3) + "{}" << "header length 3 exceeds the file size 10";

    // Encoding and JSON syntax.
    QTest::newRow("invalid UTF-8") << makeFile("{\"a\xff\":1}", 0) << "not valid UTF-8 (byte 0xff at header offset 3)";
    QTest::newRow("overlong UTF-8") << makeFile("{\"\xc0\xaf\":1}", 0) << "not valid UTF-8";
    QTest::newRow("UTF-8 surrogate") << makeFile("{\"\xed\xa0\x80\":1}", 0) << "not valid UTF-8";
    QTest::newRow("truncated UTF-8") << makeFile("{\"\xe2\x82", 0, false) << "not valid UTF-8";
    QTest::newRow("lone surrogate escape") << makeFile(R"({"\ud800":1})", 0) << "not valid JSON";
    QTest::newRow("empty header") << lengthPrefix(0) << "not valid JSON";
    QTest::newRow("whitespace only") << makeFile("        ", 0) << "not valid JSON";
    QTest::newRow("syntax error") << makeFile("{\"a\":", 0) << "not valid JSON";
    QTest::newRow("trailing garbage") << makeFile("{} x", 0) << "not valid JSON";
    QTest::newRow("two objects") << makeFile("{}{}", 0) << "not valid JSON";
    QTest::newRow("NUL padding") << makeFile(QByteArray("{}\0\0\0\0\0\0", 8), 0, false)
                                 << "header holds a NUL byte at header offset 2 (JSON allows none; pad with spaces)";
    QTest::newRow("comment") << makeFile("/**/{}", 0) << "not valid JSON";
    QTest::newRow("control character in name") << makeFile(QByteArray("{\"a\x01\":1}"), 0) << "not valid JSON";
    QTest::newRow("top-level array") << makeFile("[]", 0) << "not a JSON object (found an array)";
    QTest::newRow("top-level string") << makeFile("\"x\"", 0) << "not a JSON object (found a string)";
    QTest::newRow("top-level number") << makeFile("8", 0) << "not a JSON object (found 8)";
    QTest::newRow("deep nesting at top") << makeFile(QByteArray(100000, '[') + QByteArray(100000, ']'), 0)
                                         << "not a JSON object";

    // Duplicates (nlohmann would silently keep the last one).
    QTest::newRow("duplicate tensor") << makeFile("{" + u8x2 + "," + u8x2 + "}", 2)
                                      << "lists 'a' twice (duplicate keys are not allowed)";
    QTest::newRow("first repeat named") << makeFile("{" + entry("b", "U8", "[2]", 0, 2) + "," + entry("a", "U8", "[2]", 2, 4) + ","
                                                        + entry("b", "U8", "[2]", 4, 6) + "," + entry("a", "U8", "[2]", 6, 8) + "}",
                                                    8)
                                        << "lists 'b' twice";
    QTest::newRow("duplicate __metadata__") << makeFile(R"({"__metadata__":{},"__metadata__":{}})", 0)
                                            << "lists '__metadata__' twice";
    QTest::newRow("duplicate metadata key") << makeFile(R"({"__metadata__":{"k":"1","k":"2"}})", 0)
                                            << "__metadata__ lists 'k' twice";
    QTest::newRow("duplicate field") << oneTensor(R"({"dtype":"U8","dtype":"U8","shape":[8],"data_offsets":[0,8]})")
                                     << "duplicate field 'dtype'";

    // __metadata__ is string -> string only.
    QTest::newRow("metadata string") << makeFile(R"({"__metadata__":"pt"})", 0)
                                     << "__metadata__ must be an object mapping strings to strings (found a string)";
    QTest::newRow("metadata array") << makeFile(R"({"__metadata__":[]})", 0) << "__metadata__ must be an object";
    QTest::newRow("metadata number value") << makeFile(R"({"__metadata__":{"step":5}})", 0)
                                           << "__metadata__ value for 'step' must be a string (found 5)";
    QTest::newRow("metadata null value") << makeFile(R"({"__metadata__":{"k":null}})", 0)
                                         << "value for 'k' must be a string (found null)";
    QTest::newRow("metadata nested value") << makeFile(R"({"__metadata__":{"k":{"x":"y"}}})", 0)
                                           << "value for 'k' must be a string (found an object)";
    QTest::newRow("metadata deep nesting")
        << makeFile(R"({"__metadata__":{"k":)" + QByteArray(5000, '[') + QByteArray(5000, ']') + "}}", 0)
        << "value for 'k' must be a string (found an array)";

    // Tensor entries: exactly dtype, shape, data_offsets.
    QTest::newRow("entry is an array") << makeFile(R"({"a":[1,2]})", 0)
                                       << "entry 'a' must be an object with dtype, shape and data_offsets";
    QTest::newRow("entry is a number") << makeFile(R"({"a":1})", 0) << "entry 'a' must be an object";
    QTest::newRow("entry is null") << makeFile(R"({"a":null})", 0) << "entry 'a' must be an object";
    QTest::newRow("missing dtype") << oneTensor(R"({"shape":[8],"data_offsets":[0,8]})") << "tensor 'a' has no dtype";
    QTest::newRow("missing shape") << oneTensor(R"({"dtype":"U8","data_offsets":[0,8]})") << "tensor 'a' has no shape";
    QTest::newRow("missing data_offsets") << oneTensor(R"({"dtype":"U8","shape":[8]})")
                                          << "tensor 'a' has no data_offsets";
    QTest::newRow("unknown field") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":[0,8],"foo":1})")
                                   << "unexpected field 'foo'";
    QTest::newRow("dtype number") << oneTensor(R"({"dtype":4,"shape":[8],"data_offsets":[0,8]})")
                                  << "tensor 'a': dtype must be a string (found 4)";
    QTest::newRow("dtype object") << oneTensor(R"({"dtype":{},"shape":[8],"data_offsets":[0,8]})")
                                  << "dtype must be a string (found an object)";
    QTest::newRow("unknown dtype") << oneTensor(R"({"dtype":"Q4","shape":[8],"data_offsets":[0,8]})")
                                   << "tensor 'a': unknown dtype 'Q4'";
    QTest::newRow("lowercase dtype") << oneTensor(R"({"dtype":"f32","shape":[2],"data_offsets":[0,8]})")
                                     << "unknown dtype 'f32'";
    QTest::newRow("torch dtype name") << oneTensor(R"({"dtype":"float32","shape":[2],"data_offsets":[0,8]})")
                                      << "unknown dtype 'float32'";
    QTest::newRow("shape string") << oneTensor(R"({"dtype":"U8","shape":"8","data_offsets":[0,8]})")
                                  << "shape must be an array of non-negative integers (found a string)";
    QTest::newRow("shape negative") << oneTensor(R"({"dtype":"U8","shape":[-8],"data_offsets":[0,8]})")
                                    << "shape must be an array of non-negative integers (found -8)";
    QTest::newRow("shape minus zero") << oneTensor(R"({"dtype":"U8","shape":[-0],"data_offsets":[0,0]})")
                                      << "shape must be an array of non-negative integers (found -0)";
    QTest::newRow("shape float") << oneTensor(R"({"dtype":"U8","shape":[8.0],"data_offsets":[0,8]})")
                                 << "shape must be an array of non-negative integers (found 8.0)";
    QTest::newRow("shape exponent") << oneTensor(R"({"dtype":"U8","shape":[8e0],"data_offsets":[0,8]})")
                                    << "(found 8e0)";
    QTest::newRow("shape nested") << oneTensor(R"({"dtype":"U8","shape":[[8]],"data_offsets":[0,8]})")
                                  << "shape must be an array of non-negative integers (found an array)";
    QTest::newRow("shape bool") << oneTensor(R"({"dtype":"U8","shape":[true],"data_offsets":[0,8]})")
                                << "(found true)";
    QTest::newRow("shape null") << oneTensor(R"({"dtype":"U8","shape":null,"data_offsets":[0,8]})")
                                << "shape must be an array of non-negative integers (found null)";
    QTest::newRow("shape dim above int64") << oneTensor(
        R"({"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,8]})")
                                           << "shape dimension 9223372036854775808 is too large";
    QTest::newRow("shape dim above uint64") << oneTensor(
        R"({"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,8]})")
                                            << "(found 18446744073709551616)";
    QTest::newRow("offsets one value") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":[8]})")
                                       << "data_offsets must be two non-negative integers (found 1 value)";
    QTest::newRow("offsets empty") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":[]})")
                                   << "(found 0 values)";
    QTest::newRow("offsets three values") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":[0,8,8]})")
                                          << "(found more than two)";
    QTest::newRow("offsets negative") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":[-1,8]})")
                                      << "data_offsets must be two non-negative integers (found -1)";
    QTest::newRow("offsets float") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":[0,8.5]})")
                                   << "(found 8.5)";
    QTest::newRow("offsets string") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":"0,8"})")
                                    << "data_offsets must be two non-negative integers (found a string)";
    QTest::newRow("offsets object") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":{"0":8}})")
                                    << "(found an object)";
    QTest::newRow("offsets reversed") << oneTensor(R"({"dtype":"U8","shape":[8],"data_offsets":[8,0]})")
                                      << "data_offsets [8, 0] end before they begin";

    // Metadata::validate: tiling, sizes, arithmetic.
    QTest::newRow("hole at start") << makeFile("{" + entry("a", "U8", "[4]", 4, 8) + "}", 8)
                                   << "tensor 'a': data_offsets [4, 8] leave a hole at the start of the data";
    QTest::newRow("hole between") << makeFile("{" + entry("a", "U8", "[4]", 0, 4) + "," + entry("b", "U8", "[2]", 6, 8)
                                                  + "}",
                                              8)
                                  << "tensor 'b': data_offsets [6, 8] leave a hole after tensor 'a', which ends at 4";
    QTest::newRow("overlap") << makeFile("{" + entry("a", "U8", "[4]", 0, 4) + "," + entry("b", "U8", "[4]", 2, 6)
                                             + "}",
                                         6)
                             << "tensor 'b': data_offsets [2, 6] overlap tensor 'a', which ends at 4";
    QTest::newRow("same range twice") << makeFile("{" + entry("a", "U8", "[4]", 0, 4) + ","
                                                      + entry("b", "I8", "[4]", 0, 4) + "}",
                                                  4)
                                      << "overlap tensor 'a'";
    QTest::newRow("zero-size tensor inside another")
        << makeFile("{" + entry("a", "U8", "[4]", 0, 4) + "," + entry("z", "U8", "[0]", 2, 2) + "}", 4)
        << "overlap tensor 'a'";
    QTest::newRow("size mismatch") << makeFile("{" + entry("a.weight", "F32", "[2,3]", 0, 10) + "}", 10)
                                   << "tensor 'a.weight': data_offsets [0, 10] hold 10 bytes but shape [2,3] of F32 "
                                      "needs 24";
    QTest::newRow("scalar needs its bytes") << makeFile("{" + entry("s", "F64", "[]", 0, 0) + "}", 0)
                                            << "hold 0 bytes but shape [] of F64 needs 8";
    QTest::newRow("zero dim needs no bytes") << makeFile("{" + entry("z", "F32", "[3,0]", 0, 4) + "}", 4)
                                             << "hold 4 bytes but shape [3,0] of F32 needs 0";
    QTest::newRow("element count overflow")
        << makeFile("{" + entry("big", "U8", "[4294967296,4294967296,0]", 0, 0) + "}", 0)
        << "tensor 'big': shape [4294967296,4294967296,0] has too many elements to count";
    QTest::newRow("zero-size tensor with overflowing dims")
        << makeFile("{" + entry("big", "U8", "[0,1099511627776,1099511627776]", 0, 0) + "}", 0)
        << "shape [0,1099511627776,1099511627776] has too many elements to count";
    QTest::newRow("element count above int64")
        << makeFile("{" + entry("big", "BOOL", "[4611686018427387904,2]", 0, 0) + "}", 0)
        << "has too many elements to count";
    QTest::newRow("bit count overflow")
        << makeFile("{" + entry("big", "F64", "[2305843009213693952]", 0, 0) + "}", 0)
        << "shape [2305843009213693952] of F64 has too many bytes to count";
    QTest::newRow("F4 odd count") << makeFile("{" + entry("q", "F4", "[3]", 0, 2) + "}", 2)
                                  << "shape [3] of F4 holds 12 bits, not a whole number of bytes";
    QTest::newRow("F6 one element") << makeFile("{" + entry("q", "F6_E2M3", "[1]", 0, 1) + "}", 1)
                                    << "holds 6 bits, not a whole number of bytes";

    // The data section must end exactly at the end of the file.
    {
        const QByteArray header = "{" + u8x2 + "}      "; // padded to 40 bytes by hand
        QTest::newRow("trailing bytes") << lengthPrefix(static_cast<quint64>(header.size())) + header + "abc"
                                        << QStringLiteral("data ends at %1 but the file has %2 bytes (trailing bytes)")
                                               .arg(8 + header.size() + 2)
                                               .arg(8 + header.size() + 3);
        QTest::newRow("truncated") << lengthPrefix(static_cast<quint64>(header.size())) + header + "a"
                                   << QStringLiteral("data ends at %1 but the file has %2 bytes (truncated)")
                                          .arg(8 + header.size() + 2)
                                          .arg(8 + header.size() + 1);
    }
    QTest::newRow("trailing bytes without tensors") << makeFile("{}", 1) << "(trailing bytes)";
    QTest::newRow("data without tensors") << makeFile(R"({"__metadata__":{"format":"pt"}})", 16) << "(trailing bytes)";
    {
        const QByteArray file = makeFile("{" + entry("a", "U8", "[1152921504606846975]", 0, 1152921504606846975ULL) + "}", 8);
        QTest::newRow("huge tensor, tiny file")
            << file << QStringLiteral("data ends at %1 but the file has %2 bytes (truncated)")
                           .arg(static_cast<quint64>(file.size() - 8) + 1152921504606846975ULL)
                           .arg(file.size());
    }
    {
        // Eight tensors of 2^61-1 bytes: the last ends at 2^64-8 after the header, past any file offset.
        QByteArray header = "{";
        const quint64 size = 2305843009213693951ULL;
        for (quint64 k = 0; k < 8; ++k)
            header += (k ? "," : "") + entry("t" + QByteArray::number(k), "U8", "[" + QByteArray::number(size) + "]",
                                             k * size, (k + 1) * size);
        header += "}";
        QTest::newRow("end offset overflows the file offset")
            << makeFile(header, 8) << "data ends at offset 18446744073709551608 after the header but the file has";
    }
    QTest::newRow("NUL after the object") << makeFile(QByteArray("{}\0{\"x\":1}", 10), 0)
                                          << "NUL byte at header offset 2";
}

void TestSafetensors::invalidFiles()
{
    QFETCH(QByteArray, file);
    QFETCH(QString, phrase);
    const QString disagreement = headerReadersDisagree(file);
    QVERIFY2(disagreement.isNull(), qPrintable(disagreement));
    const QString message = errorOf(file);
    QVERIFY2(!message.isNull(), "the file parsed but should have been rejected");
    QVERIFY2(message.contains(phrase), qPrintable(QStringLiteral("message: ") + message));
    QVERIFY2(message.size() < 600, qPrintable(message));
}

void TestSafetensors::headerSizeLimit()
{
    // N just above MAX_HEADER_SIZE, with the file actually that long: refused before anything is parsed.
    const quint64 n = ckpt::kSafetensorsMaxHeaderSize + 1;
    QByteArray file(static_cast<qsizetype>(8 + n), ' ');
    file.replace(0, 8, lengthPrefix(n));
    try {
        parse(file);
        QFAIL("a header above the limit was accepted");
    } catch (const ckpt::LimitError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains("exceeds the limit of 100000000 bytes"), e.what());
    }
}

void TestSafetensors::truncatedAndMutated()
{
    const QByteArray file = makeFile(R"({"__metadata__":{"format":"pt"},)" + entry("w", "F32", "[2,2]", 0, 16) + ","
                                         + entry("b", "BF16", "[2]", 16, 20) + "," + entry("s", "I64", "[]", 20, 28)
                                         + "}",
                                     28);
    QVERIFY(errorOf(file).isNull());
    // Every proper prefix is rejected with a FormatError (nothing else escapes, nothing reads past the end).
    for (qsizetype len = 0; len < file.size(); ++len) {
        const QByteArray prefix(file.constData(), len); // deep copy: ASan sees reads past the end
        QVERIFY2(!errorOf(prefix).isNull(), qPrintable(QStringLiteral("prefix of %1 bytes parsed").arg(len)));
        const QString disagreement = headerReadersDisagree(prefix);
        QVERIFY2(disagreement.isNull(), qPrintable(disagreement));
    }
    // Every single-byte change either parses (then within bounds) or throws FormatError.
    static const unsigned char replacements[] = {0x00, 0x01, 0x20, 0x22, 0x2c, 0x2d, 0x30, 0x39, 0x5b, 0x5d,
                                                 0x7b, 0x7d, 0x7f, 0x80, 0xc3, 0xff};
    int parsed = 0;
    for (qsizetype i = 0; i < file.size(); ++i) {
        for (const unsigned char r : replacements) {
            QByteArray mutated = file;
            mutated[i] = static_cast<char>(r);
            const QString disagreement = headerReadersDisagree(mutated);
            QVERIFY2(disagreement.isNull(), qPrintable(QStringLiteral("byte %1 -> %2: ").arg(i).arg(r) + disagreement));
            try {
                const auto header = parse(mutated);
                QString why;
                QVERIFY2(tilesData(header, static_cast<quint64>(mutated.size()), &why), qPrintable(why));
                ++parsed;
            } catch (const ckpt::FormatError&) {
            }
        }
    }
    QVERIFY(parsed > 0); // mutations in the data section and in names keep the file valid
}

void TestSafetensors::readersAgree_data()
{
    // Header texts where simdjson and nlohmann could part: each must come out of the fast reader as it
    // comes out of the strict one (which the fast reader hands it to when unsure).
    QTest::addColumn<QByteArray>("header");
    const QByteArray e = entry("a", "U8", "[2]", 0, 2);
    QTest::newRow("plain") << "{" + e + "}";
    QTest::newRow("minus zero offset") << QByteArray(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[-0,2]}})");
    QTest::newRow("minus zero in a name") << "{" + entry("a-0", "U8", "[2]", 0, 2) + "}";
    QTest::newRow("negative dim") << QByteArray(R"({"a":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}})");
    QTest::newRow("float dim") << QByteArray(R"({"a":{"dtype":"U8","shape":[2.0],"data_offsets":[0,2]}})");
    QTest::newRow("exponent dim") << QByteArray(R"({"a":{"dtype":"U8","shape":[2e0],"data_offsets":[0,2]}})");
    QTest::newRow("dim above int64")
        << QByteArray(R"({"a":{"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,2]}})");
    QTest::newRow("dim above uint64")
        << QByteArray(R"({"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,2]}})");
    QTest::newRow("escaped name") << "{" + entry(R"(a\u00e9\n\"b)", "U8", "[2]", 0, 2) + "}";
    QTest::newRow("escaped NUL name") << "{" + entry(R"(a\u0000)", "U8", "[2]", 0, 2) + "}";
    QTest::newRow("escaped dtype") << "{" + entry("a", R"(U\u0038)", "[2]", 0, 2) + "}";
    QTest::newRow("raw tab in a name") << "{" + entry("a\tb", "U8", "[2]", 0, 2) + "}";
    QTest::newRow("lone surrogate") << "{" + entry(R"(\udc00)", "U8", "[2]", 0, 2) + "}";
    QTest::newRow("metadata null") << "{\"__metadata__\":null," + e + "}";
    QTest::newRow("metadata twice") << "{\"__metadata__\":{},\"__metadata__\":{}," + e + "}";
    QTest::newRow("metadata key twice") << "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}," + e + "}";
    QTest::newRow("metadata number") << "{\"__metadata__\":{\"k\":1}," + e + "}";
    QTest::newRow("name twice") << "{" + e + "," + e + "}";
    QTest::newRow("name twice, then an error") << "{" + e + "," + e + ",\"b\":1}";
    QTest::newRow("field twice")
        << QByteArray(R"({"a":{"dtype":"U8","dtype":"U8","shape":[2],"data_offsets":[0,2]}})");
    QTest::newRow("extra field") << QByteArray(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":1}})");
    QTest::newRow("three offsets") << QByteArray(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2,3]}})");
    QTest::newRow("offsets reversed") << QByteArray(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,0]}})");
    QTest::newRow("unknown dtype") << "{" + entry("a", "u8", "[2]", 0, 2) + "}";
    QTest::newRow("leading space") << " {" + e + "}";
    QTest::newRow("trailing newline") << "{" + e + "}\n";
    QTest::newRow("deep nesting") << "{\"a\":" + QByteArray(5000, '[') + QByteArray(5000, ']') + "}";
    QTest::newRow("big integer offset")
        << QByteArray(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,99999999999999999999999]}})");
}

void TestSafetensors::readersAgree()
{
    QFETCH(QByteArray, header);
    const QByteArray file = makeFile(header, 2, false);
    const QString disagreement = headerReadersDisagree(file);
    QVERIFY2(disagreement.isNull(), qPrintable(disagreement));
}

void TestSafetensors::dtypeBits()
{
    QCOMPARE(ckpt::safetensorsDtypeBits("F4"), 4);
    QCOMPARE(ckpt::safetensorsDtypeBits("F6_E2M3"), 6);
    QCOMPARE(ckpt::safetensorsDtypeBits("F6_E3M2"), 6);
    QCOMPARE(ckpt::safetensorsDtypeBits("BOOL"), 8);
    QCOMPARE(ckpt::safetensorsDtypeBits("F8_E8M0"), 8);
    QCOMPARE(ckpt::safetensorsDtypeBits("BF16"), 16);
    QCOMPARE(ckpt::safetensorsDtypeBits("C64"), 64);
    QCOMPARE(ckpt::safetensorsDtypeBits("U64"), 64);
    QCOMPARE(ckpt::safetensorsDtypeBits("f32"), 0);
    QCOMPARE(ckpt::safetensorsDtypeBits(""), 0);
    // Every code the parser accepts with a whole-byte element maps to a DType of the same size.
    for (const char* code : {"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ",
                             "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"}) {
        const ckpt::DType type = ckpt::dtypeFromSafetensors(code);
        QVERIFY2(type != ckpt::DType::Unknown, code);
        QCOMPARE(static_cast<int>(ckpt::dtypeSize(type)) * 8, ckpt::safetensorsDtypeBits(code));
    }
}

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
