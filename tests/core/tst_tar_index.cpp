// SPDX-License-Identifier: MIT
// tarIndex against Python's tarfile (Debian's python3): archives written by tarfile in each of its
// formats (ustar, GNU, pax), with long names, empty files, directories and a .nemo-like layout,
// must give the same members at the same data offsets (TarInfo.offset_data); truncated and
// corrupted archives are refused with the reason.
#include "ckpt/io/errors.h"
#include "ckpt/io/tar_index.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

namespace {

// Writes `path` with tarfile in `format` and prints [[name, type, offset_data, size], ...].
const char* kWriter = R"(
import io, json, sys, tarfile
path, fmt = sys.argv[1], {'ustar': tarfile.USTAR_FORMAT, 'gnu': tarfile.GNU_FORMAT, 'pax': tarfile.PAX_FORMAT}[sys.argv[2]]
def add(tar, name, data=None, kind=tarfile.REGTYPE):
    info = tarfile.TarInfo(name)
    info.type, info.mtime, info.mode = kind, 1700000000, 0o644
    if data is not None:
        info.size = len(data)
    tar.addfile(info, io.BytesIO(data) if data is not None else None)
with tarfile.open(path, 'w:', format=fmt) as tar:
    add(tar, '.', kind=tarfile.DIRTYPE)
    add(tar, './model_config.yaml', b'num_layers: 2\nhidden_size: 64\n')
    add(tar, './mp_rank_00', kind=tarfile.DIRTYPE)
    add(tar, './mp_rank_00/model_weights.ckpt', bytes(range(256)) * 9)
    add(tar, './empty', b'')
    if fmt != tarfile.USTAR_FORMAT:
        add(tar, './' + 'd' * 120 + '/tokenizer.model', b'x' * 700)  # past ustar's 100 + 155
    add(tar, './' + 'p' * 60 + '/' + 'n' * 80, b'prefix and name')  # fits ustar's prefix field
with tarfile.open(path) as tar:
    print(json.dumps([[m.name, m.type.decode(), m.offset_data, m.size] for m in tar.getmembers()]))
)";

std::vector<std::byte> readAll(const QString& path)
{
    std::ifstream in(path.toStdString(), std::ios::binary);
    const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(s.size());
    std::memcpy(out.data(), s.data(), s.size());
    return out;
}

} // namespace

class TestTarIndex : public QObject {
    Q_OBJECT
private slots:
    void matchesPythonTarfile_data()
    {
        QTest::addColumn<QString>("format");
        QTest::newRow("ustar") << QStringLiteral("ustar");
        QTest::newRow("gnu") << QStringLiteral("gnu");
        QTest::newRow("pax") << QStringLiteral("pax");
    }
    void matchesPythonTarfile()
    {
        QFETCH(QString, format);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("a.nemo"));
        QProcess p;
        p.start(QStringLiteral(CKPT_PYTHON), {QStringLiteral("-c"), QString::fromLatin1(kWriter), path, format});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const nlohmann::json expected = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        const std::vector<std::byte> bytes = readAll(path);
        QVERIFY(ckpt::looksLikeTar(ckpt::Bytes(bytes.data(), bytes.size())));
        const std::vector<ckpt::TarMember> members = ckpt::tarIndex(ckpt::Bytes(bytes.data(), bytes.size()));
        QCOMPARE(members.size(), expected.size());
        for (std::size_t i = 0; i < members.size(); ++i) {
            const auto& e = expected[i];
            QCOMPARE(QString::fromStdString(members[i].name), QString::fromStdString(e[0].get<std::string>()));
            QCOMPARE(members[i].type, e[1].get<std::string>()[0]);
            QCOMPARE(members[i].offset, e[2].get<uint64_t>());
            QCOMPARE(members[i].size, e[3].get<uint64_t>());
        }
        // The weights' bytes are where the index says.
        const auto weights = std::find_if(members.begin(), members.end(), [](const ckpt::TarMember& m) { return m.name.ends_with("model_weights.ckpt"); });
        QVERIFY(weights != members.end());
        QCOMPARE(std::to_integer<int>(bytes[weights->offset + 255]), 255);
    }
    void refusesBrokenArchives()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("a.tar"));
        QProcess p;
        p.start(QStringLiteral(CKPT_PYTHON), {QStringLiteral("-c"), QString::fromLatin1(kWriter), path, QStringLiteral("pax")});
        QVERIFY(p.waitForFinished(60000) && p.exitCode() == 0);
        std::vector<std::byte> bytes = readAll(path);
        // Cut inside the weights' data: refused as truncated.
        std::vector<std::byte> cut(bytes.begin(), bytes.begin() + 4000);
        try {
            ckpt::tarIndex(ckpt::Bytes(cut.data(), cut.size()));
            QFAIL("a truncated tar was indexed");
        } catch (const ckpt::FormatError& e) {
            QVERIFY2(std::string(e.what()).find("truncated") != std::string::npos, e.what());
        }
        // A flipped byte in the second member's header: its checksum no longer holds.
        bytes[512 + 3] ^= std::byte{0x20};
        try {
            ckpt::tarIndex(ckpt::Bytes(bytes.data(), bytes.size()));
            QFAIL("a corrupted tar header was accepted");
        } catch (const ckpt::FormatError& e) {
            QVERIFY2(std::string(e.what()).find("checksum") != std::string::npos, e.what());
        }
        const std::vector<std::byte> zip = {std::byte{'P'}, std::byte{'K'}, std::byte{3}, std::byte{4}};
        QVERIFY(!ckpt::looksLikeTar(ckpt::Bytes(zip.data(), zip.size())));
    }
};

QTEST_GUILESS_MAIN(TestTarIndex)
#include "tst_tar_index.moc"
