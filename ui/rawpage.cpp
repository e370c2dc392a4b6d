// SPDX-License-Identifier: MIT
#include "ui/rawpage.h"

#include "ui/importspage.h"
#include "ui/treepage.h"
#include "ui/warningspage.h"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

namespace {

QWidget* titled(const QString& title, QWidget* content)
{
    auto* box = new QWidget;
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 2, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped())));
    layout->addWidget(content, 1);
    return box;
}

} // namespace

RawPage::RawPage(QWidget* parent)
    : QWidget(parent)
    , m_tree(new TreePage)
    , m_imports(new ImportsPage)
    , m_warnings(new WarningsPage)
{
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(titled(tr("Object tree"), m_tree));
    split->addWidget(titled(tr("Imports"), m_imports));
    split->addWidget(titled(tr("Read warnings"), m_warnings));
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
}

void RawPage::setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file)
{
    m_tree->setFile(file);
    m_imports->setFile(file);
    m_warnings->setFile(file);
}
