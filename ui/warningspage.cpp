// SPDX-License-Identifier: MIT
#include "ui/warningspage.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ui/copyaction.h"
#include "ui/textformat.h"

#include <QListWidget>
#include <QVBoxLayout>

WarningsPage::WarningsPage(QWidget* parent)
    : QWidget(parent)
    , m_list(new QListWidget(this))
{
    m_list->setWordWrap(true);
    m_list->setAlternatingRowColors(true);
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    installCopyAction(m_list);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_list);
}

int WarningsPage::setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file)
{
    m_list->clear();
    if (!file)
        return 0;
    QStringList lines;
    for (const std::string& warning : file->warnings())
        lines.append(fromUtf8(warning));
    for (const std::string& note : file->imports().notes)
        lines.append(tr("imports: %1").arg(fromUtf8(note)));
    m_list->addItems(lines);
    if (lines.isEmpty()) {
        auto* item = new QListWidgetItem(tr("No warnings: the file was read without surprises."), m_list);
        item->setFlags(Qt::NoItemFlags); // a placeholder, not a warning
    }
    return static_cast<int>(lines.size());
}
