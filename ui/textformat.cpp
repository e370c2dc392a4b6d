// SPDX-License-Identifier: MIT
#include "ui/textformat.h"

#include "ckpt/findings/finding_groups.h"
#include "ckpt/rules/rule_catalogue.h"

#include <QDir>
#include <QFileInfo>

#include "ckpt/pickle/tensor_info.h"
#include "ckpt/report/text_format.h"
#include "ckpt/state/training_state.h"

#include <QFileInfo>
#include <QStringList>

QString humanBytes(uint64_t bytes)
{
    return QString::fromStdString(ckpt::humanBytes(bytes));
}

QString formatShape(const std::vector<int64_t>& shape)
{
    return QString::fromStdString(ckpt::formatShape(shape));
}

QString formatKey(const ckpt::KeyPath& path)
{
    return path.empty() ? QStringLiteral("(root)") : fromUtf8(ckpt::formatKeyPath(path));
}

QString tensorSummary(const ckpt::TensorInfo& tensor)
{
    QString s = fromUtf8(tensor.dtypeName) + QLatin1Char(' ') + formatShape(tensor.shape) + QLatin1Char(' ')
        + humanBytes(tensor.nbytes());
    if (tensor.layout != ckpt::TensorLayout::Strided)
        s += QLatin1Char(' ') + QLatin1String(ckpt::layoutName(tensor.layout));
    if (tensor.isParameter)
        s += QStringLiteral(" parameter");
    if (!tensor.device.empty() && tensor.device != "cpu")
        s += QStringLiteral(" on ") + fromUtf8(tensor.device);
    if (!tensor.problem.empty())
        s += QStringLiteral(" (") + fromUtf8(tensor.problem) + QLatin1Char(')');
    return s;
}

QString formatProvenance(const ckpt::Provenance& from)
{
    const QString file = QFileInfo(fromUtf8(from.file)).fileName();
    if (from.key.empty())
        return file;
    return file.isEmpty() ? formatKey(from.key) : file + QStringLiteral(": ") + formatKey(from.key);
}

QString checkpointFileBase(const QString& checkpointPath, const QStringList& files)
{
    const QFileInfo root(checkpointPath);
    if (root.isDir())
        return root.filePath();
    bool members = false, elsewhere = false;
    for (const QString& path : files) {
        members = members || path.startsWith(root.filePath() + QLatin1Char('/'));
        elsewhere = elsewhere || QFileInfo(path).absolutePath() != root.absolutePath();
    }
    if (members)
        return root.filePath();
    return elsewhere ? QDir::cleanPath(root.absolutePath() + QStringLiteral("/..")) : root.absolutePath();
}

QString nameInCheckpoint(const QString& base, const QString& file)
{
    return QDir(base).relativeFilePath(QFileInfo(file).absoluteFilePath());
}

QString verdictText(const std::vector<ckpt::Finding>& findings, std::size_t checkpoints, const std::vector<std::string>& order)
{
    const ckpt::Verdict verdict = ckpt::verdictOf(findings, ckpt::groupFindings(findings, order), checkpoints, ckpt::ruleCatalogue().size());
    QString text = QStringLiteral("Verdict: ") + fromUtf8(verdict.headline);
    for (const auto& line : verdict.lines)
        text += QStringLiteral("\n  ") + fromUtf8(line);
    return text;
}
