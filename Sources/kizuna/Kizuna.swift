import ArgumentParser
import KizunaCore

/// `kizuna`: the server and the tools around it.
@main
struct Kizuna: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kizuna",
        abstract: "The self-hosted backend for iOS apps.",
        discussion: """
            Settings come from flags first, then KIZUNA_* environment variables, then defaults. \
            Commands that work on the store directly take --data-dir/--database-url; commands that talk to a \
            running server take --server/--token.
            """,
        version: KizunaVersion.current,
        subcommands: [
            ServeCommand.self, MigrateCommand.self, AdminCommand.self, AppCommand.self, ConfigCommand.self, GateCommand.self, SchemaCommand.self,
            DataCommand.self, UserCommand.self, PushCommand.self, CodegenCommand.self,
            AASACommand.self, ReleaseCommand.self, VersionCommand.self, DoctorCommand.self,
        ]
    )
}
