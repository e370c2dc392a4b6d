// SPDX-License-Identifier: MIT
// The "Raw" tab: one file of the checkpoint as the pickle left it (the whole object tree, opaque
// objects by class path), the globals its pickles import (dangerous ones highlighted), and what
// the reader noticed while opening it.
#pragma once

#include <QWidget>

#include <memory>

namespace ckpt {
class CheckpointFile;
}
class ImportsPage;
class TreePage;
class WarningsPage;

class RawPage final : public QWidget {
    Q_OBJECT
public:
    explicit RawPage(QWidget* parent = nullptr);

    void setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file);

    TreePage* treePage() const { return m_tree; }
    ImportsPage* importsPage() const { return m_imports; }
    WarningsPage* warningsPage() const { return m_warnings; }

private:
    TreePage* m_tree;
    ImportsPage* m_imports;
    WarningsPage* m_warnings;
};
