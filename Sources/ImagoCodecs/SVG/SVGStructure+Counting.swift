import Foundation

/// Following the references: what the root draws.
extension SVGStructure {
    /// The filter primitives: each runs over its region once a use.
    static let filterPrimitives: Set<Substring> = [
        "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix", "feDiffuseLighting", "feDisplacementMap",
        "feDropShadow", "feFlood", "feGaussianBlur", "feImage", "feMerge", "feMorphology", "feOffset", "feSpecularLighting", "feTile",
        "feTurbulence",
    ]

    /// Paint servers a style sheet may apply everywhere at no cost beyond the paint.
    private static let paintServers: Set<Substring> = ["linearGradient", "radialGradient", "solidcolor"]

    /// What the root of `elements` costs, its content and references
    /// followed depth first (without recursion: a chain of references may
    /// be long), and what the style sheets' references may add.
    static func cost(of elements: [Element], ids: [String: Int], sheetReferences: [String]) -> Cost {
        guard !elements.isEmpty else { return Cost() }
        // (element, times it is drawn): a marker once a vertex.
        let edges = elements.map { element in
            element.children.map { ($0, 1) }
                + element.references.compactMap { ids[$0] }.map { ($0, elements[$0].name == "marker" ? max(1, element.vertices) : 1) }
        }
        // 0: not reached, 1: being drawn, 2: counted.
        var state = [UInt8](repeating: 0, count: elements.count)
        var costs = [Cost](repeating: Cost(), count: elements.count)
        var stack: [(element: Int, edge: Int)] = [(0, 0)]
        state[0] = 1
        while let (element, edge) = stack.last {
            if edge < edges[element].count {
                stack[stack.count - 1].edge += 1
                let next = edges[element][edge].0
                if state[next] == 0 {
                    state[next] = 1
                    stack.append((next, 0))
                }
                continue
            }
            var cost = elements[element].cost
            for (next, times) in edges[element] where state[next] == 2 { cost = cost + costs[next].times(times) }
            (costs[element], state[element]) = (cost, 2)
            stack.removeLast()
        }
        var total = costs[0]
        // A style sheet's reference may apply to every element, a marker to every vertex.
        let vertices = elements.reduce(0) { min($0 + $1.vertices, countLimit) }
        for target in sheetReferences.compactMap({ ids[$0] }) where !paintServers.contains(elements[target].name) {
            total = total + costs[target].times(elements[target].name == "marker" ? vertices : elements.count)
        }
        return total
    }
}
