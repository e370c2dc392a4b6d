// SPDX-License-Identifier: MIT
// The zip layer: real torch.save archives (64-byte aligned STORED records, sizes only in the
// central directory), a DEFLATE re-zip, CRC checks, and a >4 GiB ZIP64 archive with miniz's
// local-header quirks, written sparse so it costs no disk.
#include "test_support.h"

#include <QTest>

#include <filesystem>
#include <fstream>

using namespace ckpt;
using namespace testsupport;
using namespace std::string_literals;

namespace {

std::string le(uint64_t v, int bytes)
{
    std::string s;
    for (int i = 0; i < bytes; ++i)
        s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
}

std::string tensorPickle(const std::string& key, uint32_t numel)
{
    return "ctorch._utils\n_rebuild_tensor_v2\n(("s + "X\x07\x00\x00\x00storage"s + "ctorch\nFloatStorage\n"
         + "X" + le(key.size(), 4) + key + "X\x03\x00\x00\x00" "cpu"s + "J" + le(numel, 4) + "tQ" + "K\x00"s + "J"
         + le(numel, 4) + "\x85" "K\x01\x85\x89"s + "ccollections\nOrderedDict\n)R" + "tR";
}

// Writes a torch.save-shaped ZIP64 archive whose first storage is `bigSize` bytes of zeros
// (a hole in the file) and whose second storage starts beyond 4 GiB.
struct BigZip {
    uint64_t bigSize = 4'300'000'000ull;
    uint64_t smallOffset = 0; // local header offset of big/data/1
};

BigZip writeBigZip(const std::string& path)
{
    BigZip z;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    struct Cd {
        std::string name;
        uint64_t lho, size;
        uint32_t crc;
    };
    std::vector<Cd> cd;
    uint64_t pos = 0;
    auto write = [&](const std::string& s) {
        out.write(s.data(), static_cast<std::streamsize>(s.size()));
        pos += s.size();
    };
    auto local = [&](const std::string& name, uint64_t size, uint32_t crc, bool bigEntry) {
        const uint64_t lho = pos;
        std::string extra;
        if (bigEntry)
            extra = le(1, 2) + le(16, 2) + le(size, 8) + le(size, 8);
        else if (lho >= 0xFFFFFFFFull)
            extra = le(1, 2) + le(8, 2) + le(lho, 8); // miniz writes the entry's own offset here
        const std::size_t fixed = 30 + name.size() + extra.size() + 4;
        const std::size_t pad = (64 - (lho + fixed) % 64) % 64;
        extra += le(0x4246, 2) + le(pad, 2) + std::string(pad, 'Z');
        write(le(0x04034b50, 4) + le(0, 2) + le(0x0808, 2) + le(0, 2) + le(0, 4) + le(0, 4) + le(0, 4) + le(0, 4)
              + le(name.size(), 2) + le(extra.size(), 2) + name + extra);
        cd.push_back({name, lho, size, crc});
        return lho;
    };
    auto descriptor = [&](uint64_t size, uint32_t crc, bool zip64) {
        write(le(0x08074b50, 4) + le(crc, 4) + (zip64 ? le(size, 8) + le(size, 8) : le(size, 4) + le(size, 4)));
    };

    const std::string pkl = "\x80\x02}q\x00(X\x01\x00\x00\x00" "a"s + tensorPickle("0", static_cast<uint32_t>(z.bigSize / 4))
                          + "X\x01\x00\x00\x00" "b"s + tensorPickle("1", 2) + "u.";
    const uint32_t pklCrc = crc32Of(Bytes(reinterpret_cast<const std::byte*>(pkl.data()), pkl.size()));
    local("big/data.pkl", pkl.size(), pklCrc, false);
    write(pkl);
    descriptor(pkl.size(), pklCrc, false);

    local("big/data/0", z.bigSize, 0, true);
    out.seekp(static_cast<std::streamoff>(z.bigSize), std::ios::cur); // a hole: no disk used
    pos += z.bigSize;
    descriptor(z.bigSize, 0, true);

    const std::string small = le(0x3f800000, 4) + le(0x40000000, 4); // 1.0f, 2.0f
    const uint32_t smallCrc = crc32Of(Bytes(reinterpret_cast<const std::byte*>(small.data()), small.size()));
    z.smallOffset = local("big/data/1", small.size(), smallCrc, false);
    write(small);
    descriptor(small.size(), smallCrc, false);

    local("big/version", 2, crc32Of(Bytes(reinterpret_cast<const std::byte*>("3\n"), 2)), false);
    write("3\n");
    descriptor(2, crc32Of(Bytes(reinterpret_cast<const std::byte*>("3\n"), 2)), false);

    const uint64_t cdStart = pos;
    for (const auto& e : cd) {
        const bool bigSize = e.size >= 0xFFFFFFFFull;
        const bool bigOffset = e.lho >= 0xFFFFFFFFull;
        std::string extra;
        if (bigSize || bigOffset)
            extra = le(1, 2) + le((bigSize ? 16 : 0) + (bigOffset ? 8 : 0), 2) + (bigSize ? le(e.size, 8) + le(e.size, 8) : "")
                  + (bigOffset ? le(e.lho, 8) : "");
        write(le(0x02014b50, 4) + le(45, 2) + le(45, 2) + le(0x0808, 2) + le(0, 2) + le(0, 4) + le(e.crc, 4)
              + le(bigSize ? 0xFFFFFFFF : e.size, 4) + le(bigSize ? 0xFFFFFFFF : e.size, 4) + le(e.name.size(), 2)
              + le(extra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(bigOffset ? 0xFFFFFFFF : e.lho, 4)
              + e.name + extra);
    }
    const uint64_t cdSize = pos - cdStart;
    const uint64_t z64 = pos;
    write(le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(cd.size(), 8)
          + le(cd.size(), 8) + le(cdSize, 8) + le(cdStart, 8));
    write(le(0x07064b50, 4) + le(0, 4) + le(z64, 8) + le(1, 4));
    write(le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(cd.size(), 2) + le(cd.size(), 2) + le(0xFFFFFFFF, 4)
          + le(0xFFFFFFFF, 4) + le(0, 2));
    return z;
}

} // namespace

class TestZipArchive : public QObject {
    Q_OBJECT
private slots:
    void torchSaveLayout()
    {
        const auto bytes = readFile(checkpointsDir() + "/full_checkpoint.pt");
        const ZipArchive zip = ZipArchive::parse(bytes);
        QVERIFY(zip.zip64); // torch.save always writes ZIP64 records
        QVERIFY(zip.warnings.empty());
        int storages = 0;
        for (const auto& e : zip.entries) {
            QVERIFY(e.name.starts_with("full_checkpoint/"));
            QCOMPARE(e.method, uint16_t(0));
            QCOMPARE(e.flags & 0x0008, 0x0008); // sizes follow the data, so only the directory has them
            if (e.name.find("/data/") != std::string::npos) {
                ++storages;
                QCOMPARE(e.dataOffset % 64, uint64_t(0));
            }
            std::vector<std::byte> scratch;
            QCOMPARE(crc32Of(entryBytes(bytes, e, scratch)), e.crc32);
        }
        QVERIFY(storages > 20);
    }

    void deflatedRecords()
    {
        const auto bytes = readFile(checkpointsDir() + "/full_checkpoint_deflated.pt");
        const ZipArchive zip = ZipArchive::parse(bytes);
        int deflated = 0;
        for (const auto& e : zip.entries) {
            std::vector<std::byte> scratch;
            const Bytes data = entryBytes(bytes, e, scratch);
            QCOMPARE(data.size(), e.uncompressedSize);
            QCOMPARE(crc32Of(data), e.crc32);
            deflated += e.method == 8;
        }
        QVERIFY(deflated > 10);
        // An inflation bomb claim is refused before any allocation.
        ZipEntry bomb = zip.entries.front();
        bomb.method = 8;
        bomb.uncompressedSize = uint64_t(1) << 40;
        std::vector<std::byte> scratch;
        QVERIFY_THROWS_EXCEPTION(LimitError, entryBytes(bytes, bomb, scratch, uint64_t(1) << 30));
    }

    void crcMismatchIsAWarning()
    {
        auto bytes = readFile(checkpointsDir() + "/full_checkpoint.pt");
        const ZipArchive zip = ZipArchive::parse(bytes);
        const ZipEntry* storage = nullptr;
        for (const auto& e : zip.entries) {
            if (e.name.find("/data/") != std::string::npos && e.compressedSize > 16)
                storage = &e;
        }
        QVERIFY(storage);
        bytes[storage->dataOffset + 3] ^= std::byte{0x10};
        const std::string path = std::string(CKPT_TESTDATA_DIR) + "/crc-flipped.pt";
        writeFile(path, bytes);
        OpenOptions options;
        options.verifyCrc = true;
        auto file = CheckpointFile::open(path, options);
        const bool warned = std::any_of(file->warnings().begin(), file->warnings().end(),
                                        [](const std::string& w) { return w.find("CRC-32 mismatch") != std::string::npos; });
        QVERIFY(warned);
        QVERIFY(!CheckpointFile::open(path)->tensorEntries().empty()); // still opens
        std::filesystem::remove(path);
    }

    void beyondFourGiB()
    {
        const std::string path = std::string(CKPT_TESTDATA_DIR) + "/zip64-sparse.pt";
        const BigZip z = writeBigZip(path);
        QVERIFY(std::filesystem::file_size(path) > z.bigSize);
        auto file = CheckpointFile::open(path);
        QCOMPARE(file->format(), FileFormat::TorchZip);
        const ZipArchive* zip = file->zip();
        QVERIFY(zip->zip64);
        const ZipEntry* big = zip->find("big/data/0");
        const ZipEntry* small = zip->find("big/data/1");
        QVERIFY(big && small);
        QCOMPARE(big->uncompressedSize, z.bigSize);
        QCOMPARE(small->localHeaderOffset, z.smallOffset);
        QVERIFY(small->localHeaderOffset > 0xFFFFFFFFull);
        QCOMPARE(big->dataOffset % 64, uint64_t(0));
        QCOMPARE(small->dataOffset % 64, uint64_t(0));

        QCOMPARE(file->tensorEntries().size(), std::size_t(2));
        const TensorInfo& a = file->tensors()[file->tensorEntries()[0].tensor];
        QVERIFY2(a.problem.empty(), a.problem.c_str());
        QCOMPARE(a.nbytes(), z.bigSize);
        const TensorInfo& b = file->tensors()[file->tensorEntries()[1].tensor];
        std::vector<std::byte> scratch;
        const Bytes region = file->tensorRegion(b, scratch);
        QCOMPARE(region.size(), std::size_t(8));
        float values[2];
        std::memcpy(values, region.data(), 8);
        QCOMPARE(values[0], 1.0f);
        QCOMPARE(values[1], 2.0f);
        std::filesystem::remove(path);
    }
};

QTEST_GUILESS_MAIN(TestZipArchive)
#include "tst_zip_archive.moc"
