// SPDX-License-Identifier: MIT
#include "test_support.h"

#include "ckpt/formats/python_json.h"

#include "ckpt/report/json_export.h"

#include <QProcess>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace testsupport {

std::string checkpointsDir() { return std::string(CKPT_TESTDATA_DIR) + "/checkpoints"; }
std::string hostileDir() { return std::string(CKPT_TESTDATA_DIR) + "/hostile"; }

std::string corpusDir()
{
    // $CKPT_CORPUS at test time (tests/CMakeLists.txt corpus.status), the older $CKPT_CORPUS_DIR, or
    // the configured CKPT_CORPUS_DIR.
    const char* env = std::getenv("CKPT_CORPUS");
    if (!env || !*env)
        env = std::getenv("CKPT_CORPUS_DIR");
    const std::string dir = env && *env ? env : CKPT_DEFAULT_CORPUS_DIR;
    return std::filesystem::is_directory(dir) ? dir : std::string();
}

nlohmann::json readJson(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    // The generators write Python's json (allow_nan): Infinity and NaN are values there.
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return ckpt::parsePythonJson(text);
}

std::vector<std::byte> readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(raw.size());
    if (!raw.empty()) // memcpy from an empty vector's null data() is undefined (UBSan says so)
        std::memcpy(out.data(), raw.data(), raw.size());
    return out;
}

void writeFile(const std::string& path, ckpt::Bytes bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

namespace {

// Copies elements from a strided layout into C order; `elem` bytes each.
std::vector<std::byte> gather(ckpt::Bytes base, std::size_t elem, const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& stride, int64_t offset)
{
    int64_t numel = 1;
    for (int64_t d : shape)
        numel *= d;
    std::vector<std::byte> out;
    if (numel <= 0)
        return out;
    out.reserve(static_cast<std::size_t>(numel) * elem);
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t n = 0; n < numel; ++n) {
        int64_t at = offset;
        for (std::size_t d = 0; d < shape.size(); ++d)
            at += index[d] * stride[d];
        const auto* p = base.data() + static_cast<std::size_t>(at) * elem;
        out.insert(out.end(), p, p + elem);
        for (std::size_t d = shape.size(); d-- > 0;) {
            if (++index[d] < shape[d])
                break;
            index[d] = 0;
        }
    }
    return out;
}

} // namespace

std::vector<std::byte> contiguousBytes(const ckpt::CheckpointFile& file, const ckpt::TensorInfo& t)
{
    std::vector<std::byte> scratch;
    const ckpt::Bytes storage = file.storageBytes(static_cast<std::size_t>(t.storage), scratch);
    auto out = gather(storage, ckpt::dtypeSize(t.dtype), t.shape, t.stride, t.storageOffset);
    if (file.bigEndian())
        ckpt::swapElementBytes(out, t.dtype);
    return out;
}

std::vector<std::byte> contiguousArrayBytes(const ckpt::ValueGraph& graph, const ckpt::NdArrayInfo& a)
{
    const std::string& data = graph[a.data].text;
    const ckpt::Bytes bytes(reinterpret_cast<const std::byte*>(data.data()), data.size());
    std::vector<int64_t> stride(a.shape.size(), 1);
    if (a.fortranOrder) {
        for (std::size_t d = 1; d < a.shape.size(); ++d)
            stride[d] = stride[d - 1] * a.shape[d - 1];
    } else {
        for (std::size_t d = a.shape.size(); d-- > 1;)
            stride[d - 1] = stride[d] * a.shape[d];
    }
    return gather(bytes, a.itemSize, a.shape, stride, 0);
}

CkptRun runCkpt(const QStringList& args)
{
    QProcess p;
    p.start(QStringLiteral(CKPT_BIN), args);
    if (!p.waitForFinished(120000))
        return {};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

std::string keyString(const ckpt::KeyPath& path) { return ckpt::keyPathToJson(path).dump(); }
std::string keyString(const nlohmann::json& key) { return key.dump(); }

nlohmann::json ckptJson(const QStringList& args)
{
    const CkptRun r = runCkpt(args);
    if (r.code != 0 && r.code != 1)
        qWarning("ckpt %s: %s", qPrintable(args.join(' ')), r.err.constData());
    return nlohmann::json::parse(r.out.toStdString());
}

} // namespace testsupport
