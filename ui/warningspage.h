// SPDX-License-Identifier: MIT
// The "Warnings" tab: what the reader noticed while opening the file (and structural findings of
// the imports scan), one line each.
#pragma once

#include <QWidget>

#include <memory>

namespace ckpt {
class CheckpointFile;
}
class QListWidget;

class WarningsPage final : public QWidget {
    Q_OBJECT
public:
    explicit WarningsPage(QWidget* parent = nullptr);

    /// Returns the number of warnings shown.
    int setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file);

    QListWidget* list() const { return m_list; }

private:
    QListWidget* m_list;
};
