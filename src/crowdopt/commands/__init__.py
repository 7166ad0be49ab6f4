"""Command modules: each defines `register(cli)` and adds its subcommands (see crowdopt.cli.Cli)."""
