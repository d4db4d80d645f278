/// A plain text table with aligned columns, for human output.
struct Table {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: String...) { self.header = header }

    mutating func add(_ cells: String...) { rows.append(cells) }
    mutating func add(_ cells: [String]) { rows.append(cells) }

    /// The table as lines; numbers are right-aligned.
    var rendered: String {
        let all = [header] + rows
        var widths = Array(repeating: 0, count: header.count)
        for row in all {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func render(_ row: [String]) -> String {
            row.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                let numeric = !cell.isEmpty && cell.allSatisfy { $0.isNumber || $0 == "." || $0 == "-" || $0 == "," }
                return numeric ? pad + cell : cell + pad
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        var lines = [Terminal.styled(render(header), .bold)]
        lines += rows.map(render)
        return lines.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
