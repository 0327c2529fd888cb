import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An SVG document parsed by Foundation's XMLParser (libxml2 underneath): if it
/// parses, it is well-formed XML; the tree lets a test measure what was drawn.
final class XMLNode {
    let name: String
    let attributes: [String: String]
    var children: [XMLNode] = []
    var text = ""

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    /// This element and every element under it, in document order.
    var all: [XMLNode] { [self] + children.flatMap(\.all) }

    func elements(_ name: String, class wanted: String? = nil) -> [XMLNode] {
        all.filter { $0.name == name && (wanted == nil || $0.classes.contains(wanted!)) }
    }

    var classes: [String] { (attributes["class"] ?? "").split(separator: " ").map(String.init) }

    func number(_ attribute: String) -> Double? { attributes[attribute].flatMap(Double.init) }

    /// The `<title>` child's text.
    var title: String? { children.first { $0.name == "title" }?.text }

    /// All text under this element.
    var allText: String { text + children.map(\.allText).joined() }

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ text: String) throws -> XMLNode {
        let parser = XMLParser(data: Data(text.utf8))
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            throw ParseError(description: "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "no root") at line \(parser.lineNumber)")
        }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLNode?
        var stack: [XMLNode] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let node = XMLNode(name: name, attributes: attributes)
            if let parent = stack.last { parent.children.append(node) } else { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }
    }
}
