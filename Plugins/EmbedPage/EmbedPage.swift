import Foundation
import PackagePlugin

/// Compiles a target's `Page/` folder (the web page's HTML, CSS, script, icon)
/// into the target as `enum PageFiles` string constants, through the small
/// PageEmbedder tool: the files stay real files to edit, the binary reads none
/// at run time. The target excludes `Page` (so SwiftPM does not ask what the
/// files are); this plugin lists it itself, and the build reruns the tool when
/// any of them changes.
@main
struct EmbedPage: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = target.directoryURL.appending(path: "Page")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path(percentEncoded: false))
            .filter { !$0.hasPrefix(".") }.sorted()
        let inputs = names.map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "PageFiles.swift")
        return [.buildCommand(displayName: "Embedding the page's \(names.count) files in \(target.name)",
                              executable: try context.tool(named: "PageEmbedder").url,
                              arguments: [output.path(percentEncoded: false)] + inputs.map { $0.path(percentEncoded: false) },
                              inputFiles: inputs, outputFiles: [output])]
    }
}
