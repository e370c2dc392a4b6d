// SPDX-License-Identifier: MIT
#include "ckpt/io/archive_members.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <vector>

namespace ckpt {

void forEachArchiveMember(Bytes data, uint64_t maxMemberBytes,
                          const std::function<void(const std::string& name, Bytes content)>& visit,
                          std::vector<std::string>* skipped)
{
    std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), &archive_read_free);
    archive_read_support_filter_all(a.get());
    archive_read_support_format_7zip(a.get());
    archive_read_support_format_tar(a.get());
    archive_read_support_format_zip(a.get());
    if (archive_read_open_memory(a.get(), data.data(), data.size()) != ARCHIVE_OK)
        throw FormatError(std::string("cannot read the archive: ") + archive_error_string(a.get()));
    archive_entry* entry = nullptr;
    std::vector<std::byte> buffer;
    int count = 0;
    while (true) {
        const int rc = archive_read_next_header(a.get(), &entry);
        if (rc == ARCHIVE_EOF)
            break;
        if (rc < ARCHIVE_WARN)
            throw FormatError(std::string("cannot read the archive: ") + archive_error_string(a.get()));
        if (++count > 100000)
            throw LimitError("the archive has more than 100000 members (limit exceeded)");
        // 7z entries written without attributes report file type 0: treat them as files.
        const auto type = archive_entry_filetype(entry);
        if (type != AE_IFREG && type != 0)
            continue;
        const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "?";
        const la_int64_t size = archive_entry_size(entry);
        if (size < 0 || static_cast<uint64_t>(size) > maxMemberBytes) {
            if (skipped)
                skipped->push_back(name);
            continue;
        }
        buffer.resize(static_cast<std::size_t>(size));
        const la_ssize_t got = archive_read_data(a.get(), buffer.data(), buffer.size());
        if (got < 0)
            throw FormatError("cannot read archive member " + name + ": " + archive_error_string(a.get()));
        visit(name, Bytes(buffer.data(), static_cast<std::size_t>(got)));
    }
}

} // namespace ckpt
