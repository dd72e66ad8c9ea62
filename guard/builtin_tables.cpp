// The built-in rule tables of design §4: the recommended sensitive-path set (`recommended: true`)
// and the agent-configuration tier (`agent_config: true`). They live in code, not in a shipped YAML
// file, so a missing or edited file can never silently unguard a credential. Each row's tier is
// argued in docs/policy-rows.md; the git tier (design §4a) is separate code and has no rows here.
#include "guard/builtin_tables.hpp"

#include <cstddef>
#include <string_view>

namespace guardfs::guard {

namespace {

using patterns::Verdict;

// Rows are written in the segment-glob syntax of design §2. These checks run at compile time so a
// row that the loader would refuse (or that could never match) fails the build, not the mount.
// Characters other tools read as syntax are literal here (the loader warns about them), so a
// built-in row uses none of them; nor a `.git` segment, which is the git tier's.
constexpr bool valid_segment(std::string_view seg) noexcept {
    if (seg.empty() || seg == "." || seg == ".." || seg == "**" || seg == ".git") {
        return false;
    }
    for (const char c : seg) {
        if (c < 0x20 || c > 0x7e || c == '?' || c == '[' || c == ']' || c == '{' || c == '}' ||
            c == '\\') {
            return false;
        }
    }
    return true;
}

constexpr bool valid_pattern(std::string_view p) noexcept {
    if (p.empty() || p.front() == '~' || p.front() == '/' || p.back() == '/') {
        return false;
    }
    std::size_t start = 0;
    while (start <= p.size()) {
        const std::size_t end = p.find('/', start);
        const std::size_t stop = end == std::string_view::npos ? p.size() : end;
        if (!valid_segment(p.substr(start, stop - start))) {
            return false;
        }
        start = stop + 1;
    }
    return true;
}

constexpr bool valid_reason(std::string_view r) noexcept {
    if (r.empty()) {
        return false;
    }
    for (const char c : r) {
        if (c < 0x20 || c > 0x7e || c == '"') {
            return false;
        }
    }
    return true;
}

template <std::size_t N>
constexpr bool valid_rows(const BuiltinRow (&rows)[N]) noexcept {
    for (const BuiltinRow& row : rows) {
        if (!valid_pattern(row.pattern) || !valid_reason(row.reason) ||
            row.verdict == Verdict::Allow) {
            return false;
        }
    }
    return true;
}

} // namespace

std::span<const BuiltinRow> recommended_rows() noexcept {
    static constexpr BuiltinRow kRows[] = {
        // ---- SSH, GPG and private keys ----
        {".ssh", Verdict::Deny,
         "SSH private keys, authorized_keys and client config (ProxyCommand runs code)"},
        {"id_rsa", Verdict::Deny, "SSH default identity file name, wherever it is kept"},
        {"id_dsa", Verdict::Deny, "SSH default identity file name, wherever it is kept"},
        {"id_ecdsa", Verdict::Deny, "SSH default identity file name, wherever it is kept"},
        {"id_ecdsa_sk", Verdict::Deny, "SSH default identity file name, wherever it is kept"},
        {"id_ed25519", Verdict::Deny, "SSH default identity file name, wherever it is kept"},
        {"id_ed25519_sk", Verdict::Deny, "SSH default identity file name, wherever it is kept"},
        {"*.ppk", Verdict::Deny, "PuTTY private key"},
        {".gnupg", Verdict::Deny, "GnuPG private keys, trust database and gpg-agent config"},
        {".pki", Verdict::Deny, "NSS certificate and private-key database"},

        // ---- cloud and infrastructure CLIs ----
        {".aws", Verdict::Deny, "AWS credentials, SSO token cache and credential_process config"},
        {".azure", Verdict::Deny, "Azure CLI tokens and profile"},
        {".config/gcloud", Verdict::Deny, "Google Cloud SDK credentials and configuration"},
        {".gcloud", Verdict::Deny, "Google Cloud credentials (legacy location)"},
        {"application_default_credentials.json", Verdict::Deny,
         "Google application default credentials"},
        {"adc.json", Verdict::Ask, "Google application default credentials (short name)"},
        {".boto", Verdict::Deny, "gsutil and boto credentials"},
        {".kube", Verdict::Deny,
         "Kubernetes cluster credentials; exec plugins in kubeconfig run code"},
        {".docker/config.json", Verdict::Deny, "Docker registry auth and credential helpers"},
        {".dockercfg", Verdict::Deny, "Docker registry auth (legacy format)"},
        {".oci", Verdict::Deny, "Oracle Cloud CLI config and API signing key"},
        {".config/doctl", Verdict::Deny, "DigitalOcean CLI access token"},
        {".fly", Verdict::Deny, "Fly.io CLI access token"},
        {".config/netlify", Verdict::Deny, "Netlify CLI access token (Linux)"},
        {"Library/Preferences/netlify", Verdict::Deny, "Netlify CLI access token (macOS)"},
        {".netlify/config.json", Verdict::Deny, "Netlify CLI access token (legacy home location)"},
        {"com.vercel.cli", Verdict::Deny, "Vercel CLI auth.json"},
        {".config/gh", Verdict::Deny, "GitHub CLI OAuth token (hosts.yml)"},
        {".config/hub", Verdict::Deny, "hub GitHub token"},
        {".config/glab-cli", Verdict::Deny, "GitLab CLI token"},
        {".terraform.d", Verdict::Deny, "Terraform Cloud credentials and plugin cache"},
        {".terraformrc", Verdict::Deny, "Terraform CLI config: credentials and provider sources"},
        {"terraform.tfvars", Verdict::Ask,
         "Terraform variables, loaded automatically; often secrets"},
        {"*.auto.tfvars", Verdict::Ask, "Terraform variables, loaded automatically; often secrets"},
        {".pulumi/credentials.json", Verdict::Deny, "Pulumi access tokens"},
        {".pulumi", Verdict::Ask, "Pulumi home: plugins are binaries the CLI runs"},
        {".vault-token", Verdict::Deny, "HashiCorp Vault token"},

        // ---- password stores, keyrings and secret directories ----
        {".config/op", Verdict::Deny, "1Password CLI configuration and session"},
        {".op", Verdict::Deny, "1Password CLI configuration (legacy location)"},
        {".password-store", Verdict::Deny, "pass password store"},
        {".local/share/keyrings", Verdict::Deny, "GNOME keyring"},
        {"*.kdbx", Verdict::Deny, "KeePass database"},
        {"*.keychain", Verdict::Deny, "macOS keychain"},
        {"*.keychain-db", Verdict::Deny, "macOS keychain"},
        {"Library/Keychains", Verdict::Deny, "macOS keychains"},
        {".credentials", Verdict::Deny, "Credentials directory or file"},
        {".secrets", Verdict::Ask, "Secrets directory or file (also act's default secret file)"},
        {".keys", Verdict::Deny, "Keys directory"},

        // ---- plain-text credentials ----
        {".netrc", Verdict::Deny, "Plain-text machine passwords for curl, git, ftp and Heroku"},
        {"_netrc", Verdict::Deny, "Plain-text machine passwords (Windows spelling)"},
        {".authinfo", Verdict::Deny, "Plain-text machine passwords (Emacs, Gnus)"},
        {".authinfo.gpg", Verdict::Deny, "Encrypted machine passwords (Emacs, Gnus)"},
        {".pgpass", Verdict::Deny, "PostgreSQL passwords"},
        {".my.cnf", Verdict::Deny, "MySQL client password"},
        {".mylogin.cnf", Verdict::Deny, "MySQL login-path credentials"},
        {".s3cfg", Verdict::Deny, "s3cmd credentials"},
        {"credentials.json", Verdict::Ask, "Conventional name of OAuth client secrets and tokens"},
        {"*service-account*.json", Verdict::Ask, "Cloud service-account key"},
        {"secrets.json", Verdict::Ask, "Conventional secrets file"},
        {"secrets.yml", Verdict::Ask, "Conventional secrets file"},
        {"secrets.yaml", Verdict::Ask, "Conventional secrets file"},
        {"*.secret", Verdict::Ask, "Secret file by extension"},
        {"*.credentials", Verdict::Ask, "Credentials file by extension"},

        // ---- environment files, certificates and key stores ----
        {".env", Verdict::Ask, "Environment secrets; also loaded into tools and agent hosts"},
        {".env.*", Verdict::Ask, "Environment secrets (.env.local, .env.production, ...)"},
        {"*.env", Verdict::Ask, "Environment secrets by extension (prod.env, ...)"},
        {"*key*.pem", Verdict::Ask,
         "PEM private key by its conventional name (key.pem, privkey.pem)"},
        {"*priv*.pem", Verdict::Ask, "PEM private key by its conventional name (private.pem)"},
        {"*priv*.key", Verdict::Ask, "Private key by its conventional name (private.key)"},
        {"server.key", Verdict::Ask, "TLS server private key (web server convention)"},
        {"tls.key", Verdict::Ask, "TLS private key (Kubernetes secret convention)"},
        {"config/master.key", Verdict::Ask,
         "Rails master key: decrypts config/credentials.yml.enc"},
        {"config/credentials/*.key", Verdict::Ask, "Rails per-environment credentials key"},
        {"*.p12", Verdict::Ask, "PKCS#12 bundle with a private key"},
        {"*.pfx", Verdict::Ask, "PKCS#12 bundle with a private key"},
        {"*.jks", Verdict::Ask, "Java key store"},
        {"*.keystore", Verdict::Ask, "Java or Android key store"},

        // ---- package registries and their tokens ----
        {".npmrc", Verdict::Deny, "npm registry tokens; script-shell and node-options run code"},
        {".yarnrc", Verdict::Ask, "Yarn 1 config: registry, yarn-path runs code"},
        {".yarnrc.yml", Verdict::Ask, "Yarn config: npmAuthToken, yarnPath and plugins run code"},
        {".pypirc", Verdict::Deny, "PyPI upload tokens"},
        {"pip.conf", Verdict::Ask, "pip config: the index every install downloads from"},
        {".condarc", Verdict::Ask, "conda config: channels every install downloads from"},
        {".gem/credentials", Verdict::Deny, "RubyGems API key"},
        {".bundle/config", Verdict::Ask,
         "Bundler config: gem source credentials and install paths"},
        {".cargo/credentials", Verdict::Deny, "crates.io token (legacy name)"},
        {".cargo/credentials.toml", Verdict::Deny, "crates.io token"},
        {".m2/settings.xml", Verdict::Deny, "Maven server passwords and repository mirrors"},
        {".m2/settings-security.xml", Verdict::Deny, "Maven master password"},
        {".gradle/gradle.properties", Verdict::Deny,
         "Gradle user properties: repository and signing secrets"},
        {".gradle/init.gradle", Verdict::Deny, "Gradle init script: runs in every build"},
        {".gradle/init.gradle.kts", Verdict::Deny, "Gradle init script: runs in every build"},
        {".gradle/init.d", Verdict::Deny, "Gradle init scripts: run in every build"},
        {".nuget/NuGet/NuGet.Config", Verdict::Ask,
         "NuGet user config: package sources and their credentials"},
        {".composer/auth.json", Verdict::Deny, "Composer repository credentials"},
        {".config/composer/auth.json", Verdict::Deny, "Composer repository credentials"},

        // ---- shell start-up files ----
        {".bashrc", Verdict::Deny, "Runs in every interactive bash"},
        {".bash_profile", Verdict::Deny, "Runs in every bash login shell"},
        {".bash_login", Verdict::Deny, "Runs in every bash login shell"},
        {".bash_logout", Verdict::Deny, "Runs when every bash login shell exits"},
        {".bash_aliases", Verdict::Deny, "Sourced by .bashrc on most distributions"},
        {".profile", Verdict::Deny, "Runs in every login shell"},
        {".zshrc", Verdict::Deny, "Runs in every interactive zsh"},
        {".zprofile", Verdict::Deny, "Runs in every zsh login shell"},
        {".zshenv", Verdict::Deny, "Runs in every zsh, scripts included"},
        {".zlogin", Verdict::Deny, "Runs in every zsh login shell"},
        {".zlogout", Verdict::Deny, "Runs when every zsh login shell exits"},
        {".config/fish", Verdict::Deny, "fish start-up files, functions and conf.d"},
        {".cshrc", Verdict::Deny, "Runs in every csh"},
        {".tcshrc", Verdict::Deny, "Runs in every tcsh"},
        {".login", Verdict::Deny, "Runs in every csh login shell"},
        {".kshrc", Verdict::Deny, "Runs in every interactive ksh"},
        {".envrc", Verdict::Ask, "direnv runs it on cd, once allowed"},
        {".config/direnv", Verdict::Deny, "direnvrc runs with every .envrc"},
        {".local/share/direnv", Verdict::Deny, "direnv's allow list: a write approves an .envrc"},
        {".ripgreprc", Verdict::Deny, "ripgrep config: --pre runs a command on every search"},

        // ---- login and session persistence ----
        {".pam_environment", Verdict::Deny,
         "Environment of every login session (LD_PRELOAD, PATH)"},
        {".config/environment.d", Verdict::Deny, "Environment of the systemd user session"},
        {".config/autostart", Verdict::Deny, "Programs started with every desktop session"},
        {".config/systemd/user", Verdict::Deny, "systemd user units and timers"},
        {".local/share/systemd/user", Verdict::Deny, "systemd user units and timers"},
        {".xinitrc", Verdict::Deny, "Runs when X starts"},
        {".xprofile", Verdict::Deny, "Runs with every X session"},
        {".xsession", Verdict::Deny, "Runs with every X session"},
        {".xsessionrc", Verdict::Deny, "Runs with every X session"},
        {"Library/LaunchAgents", Verdict::Deny, "macOS per-user launchd jobs"},
        {"Library/LaunchDaemons", Verdict::Deny, "macOS system launchd jobs"},
        {"etc/profile", Verdict::Ask, "System-wide login shell start-up"},
        {"etc/profile.d", Verdict::Ask, "System-wide login shell start-up"},
        {"etc/bash.bashrc", Verdict::Ask, "System-wide bash start-up"},
        {"etc/zsh", Verdict::Ask, "System-wide zsh start-up"},
        {"etc/environment", Verdict::Ask, "System-wide login environment"},
        {"etc/ld.so.preload", Verdict::Ask, "Library loaded into every dynamically linked program"},
        {"etc/sudoers", Verdict::Ask, "sudo policy"},
        {"etc/sudoers.d", Verdict::Ask, "sudo policy"},
        {"etc/crontab", Verdict::Ask, "System cron table"},
        {"etc/cron.d", Verdict::Ask, "System cron tables"},
        {"var/spool/cron", Verdict::Ask, "Per-user crontabs"},
        {"etc/systemd/system", Verdict::Ask, "System systemd units"},

        // ---- shell and REPL histories ----
        {".*_history", Verdict::Deny,
         "Shell and REPL history: typed secrets; tampering hides activity"},
        {"fish_history", Verdict::Deny, "fish history: typed secrets; tampering hides activity"},

        // ---- version control outside .git ----
        {".gitconfig", Verdict::Deny,
         "Global git config: hooksPath, credential.helper, aliases, pager"},
        {".config/git", Verdict::Deny, "Global git config, attributes and excludes (XDG location)"},
        {".git-credentials", Verdict::Deny, "git credential-store passwords"},
        {".githooks", Verdict::Ask, "Hook scripts that core.hooksPath commonly points at"},
        {".husky", Verdict::Ask, "Husky git hook scripts"},
        {".pre-commit-config.yaml", Verdict::Ask, "pre-commit runs the hooks it lists"},
        {"lefthook.yml", Verdict::Ask, "Lefthook runs the commands it lists"},
        {"lefthook.yaml", Verdict::Ask, "Lefthook runs the commands it lists"},
        {".lefthook.yml", Verdict::Ask, "Lefthook runs the commands it lists"},
        {".lefthook.yaml", Verdict::Ask, "Lefthook runs the commands it lists"},
        {"lefthook-local.yml", Verdict::Ask, "Lefthook runs the commands it lists"},
        {"lefthook-local.yaml", Verdict::Ask, "Lefthook runs the commands it lists"},
        {".lefthook", Verdict::Ask, "Lefthook hook scripts"},
        {".hgrc", Verdict::Deny, "Mercurial user config: hooks and extensions run code"},
        {".config/hg", Verdict::Deny, "Mercurial user config (XDG location)"},
        {".hg/hgrc", Verdict::Deny, "Mercurial repository config: hooks run on hg commands"},

        // ---- editors and IDEs ----
        {".vscode/tasks.json", Verdict::Deny, "VS Code tasks: runOn folderOpen runs commands"},
        {".vscode/settings.json", Verdict::Deny,
         "VS Code workspace settings: interpreter, terminal and tool paths"},
        {".vscode/launch.json", Verdict::Deny, "VS Code launch configurations run programs"},
        {".vscode", Verdict::Ask, "VS Code workspace configuration"},
        {"*.code-workspace", Verdict::Ask,
         "VS Code multi-root workspace: settings, tasks and launch"},
        {".idea", Verdict::Ask, "JetBrains project: run configurations, file watchers, SDK paths"},
        {".devcontainer", Verdict::Ask,
         "Dev container definition: postCreateCommand and friends run"},
        {".devcontainer.json", Verdict::Ask,
         "Dev container definition: postCreateCommand and friends run"},
        {".vimrc", Verdict::Deny, "Runs in every vim"},
        {".gvimrc", Verdict::Deny, "Runs in every gvim"},
        {".vim", Verdict::Ask, "vim plugins and ftplugins run code"},
        {".config/nvim", Verdict::Ask, "Neovim init and plugins run code"},
        {".exrc", Verdict::Ask, "Project-local vi config (exrc option)"},
        {".nvimrc", Verdict::Ask, "Project-local Neovim config (exrc option)"},
        {".nvim.lua", Verdict::Ask, "Project-local Neovim config (exrc option)"},
        {".emacs", Verdict::Deny, "Runs in every Emacs"},
        {".emacs.d", Verdict::Ask, "Emacs init and packages run code"},
        {".config/emacs", Verdict::Ask, "Emacs init and packages run code"},

        // ---- build tools and package-manager hooks ----
        {".cargo/config.toml", Verdict::Ask,
         "Cargo config: runner, rustc-wrapper and linker run code"},
        {".cargo/config", Verdict::Ask, "Cargo config (legacy name): runner and wrappers run code"},
        {".mvn", Verdict::Ask, "Maven wrapper, extensions and JVM options"},
        {"maven-wrapper.properties", Verdict::Ask,
         "Maven wrapper: distributionUrl is the Maven that runs"},
        {"gradle-wrapper.properties", Verdict::Ask,
         "Gradle wrapper: distributionUrl is the Gradle that runs"},
        {"gradle-wrapper.jar", Verdict::Ask, "Gradle wrapper: the jar gradlew runs"},
        {".bazelrc", Verdict::Ask, "Bazel flags: tool and action overrides"},
        {".bazelversion", Verdict::Ask, "Bazel version Bazelisk downloads and runs"},
        {".bazeliskrc", Verdict::Ask, "Bazelisk config: where the Bazel binary comes from"},
        {".pnpmfile.cjs", Verdict::Ask, "pnpm hooks run during every install"},
        {"bunfig.toml", Verdict::Ask, "Bun config: preload scripts and registries"},
        {".bunfig.toml", Verdict::Ask, "Bun config: preload scripts and registries"},
        {".yarn/plugins", Verdict::Ask, "Yarn plugins: code Yarn loads on every run"},
        {".yarn/releases", Verdict::Ask, "Yarn release that yarnPath runs"},

        // ---- CI definitions ----
        {".github/workflows", Verdict::Ask, "GitHub Actions: runs with repository secrets on push"},
        {".github/actions", Verdict::Ask, "Local GitHub Actions that workflows run"},
        {".gitea/workflows", Verdict::Ask, "Gitea Actions: runs with repository secrets on push"},
        {".forgejo/workflows", Verdict::Ask,
         "Forgejo Actions: runs with repository secrets on push"},
        {".gitlab-ci.yml", Verdict::Ask, "GitLab CI: runs with project secrets on push"},
        {".circleci", Verdict::Ask, "CircleCI: runs with project secrets on push"},
        {"Jenkinsfile", Verdict::Ask, "Jenkins pipeline: runs with job credentials"},
        {".buildkite", Verdict::Ask, "Buildkite pipeline: runs with agent secrets"},
        {"azure-pipelines.yml", Verdict::Ask, "Azure Pipelines: runs with pipeline secrets"},
        {"bitbucket-pipelines.yml", Verdict::Ask,
         "Bitbucket Pipelines: runs with repository secrets"},
    };
    static_assert(valid_rows(kRows), "a recommended row is malformed");
    return kRows;
}

std::span<const BuiltinRow> agent_config_rows() noexcept {
    static constexpr BuiltinRow kRows[] = {
        // ---- Claude Code and Claude Desktop ----
        {".claude/settings.json", Verdict::Deny,
         "Claude Code settings: permissions, hooks, env, MCP"},
        {".claude/settings.local.json", Verdict::Deny,
         "Claude Code local settings: permissions, hooks, env"},
        {".claude/.credentials.json", Verdict::Deny, "Claude Code OAuth tokens"},
        {".claude/hooks", Verdict::Deny, "Claude Code hook scripts: run by the host"},
        {".claude/agents", Verdict::Deny, "Claude Code subagents: tools and permissions on load"},
        {".claude/commands", Verdict::Deny,
         "Claude Code slash commands: allowed-tools and shell expansion"},
        {".mcp.json", Verdict::Deny, "Project MCP servers: command lines the host launches"},
        {"claude-code/managed-*.json", Verdict::Deny, "Claude Code managed policy (Linux)"},
        {"ClaudeCode/managed-*.json", Verdict::Deny, "Claude Code managed policy (macOS)"},
        {"claude_desktop_config.json", Verdict::Deny,
         "Claude Desktop MCP servers: command lines it launches"},
        {".claude", Verdict::Ask,
         "Claude Code configuration directory: skills, plugins, rules, memory"},
        {".claude.json", Verdict::Ask,
         "Claude Code user state: holds user-scope MCP server definitions"},
        {"CLAUDE.md", Verdict::Ask, "Instructions loaded into every Claude Code session"},
        {"CLAUDE.local.md", Verdict::Ask, "Instructions loaded into every Claude Code session"},

        // ---- sema ----
        {".sema/settings.json", Verdict::Deny, "sema settings: permissions, hooks, env, MCP"},
        {".sema/hooks", Verdict::Deny, "sema hook scripts: run by the host"},
        {".sema/agents", Verdict::Deny, "sema agent definitions: re-authorize the agent on load"},
        {".sema", Verdict::Ask, "sema configuration directory"},

        // ---- OpenAI Codex ----
        {".codex/config.toml", Verdict::Deny,
         "Codex config: sandbox, approval policy, MCP servers"},
        {".codex/auth.json", Verdict::Deny, "Codex credentials"},
        {".codex/rules", Verdict::Deny, "Codex command rules: allow-lists for commands"},
        {".codex/policy", Verdict::Deny, "Codex execpolicy files (earlier location)"},
        {".codex", Verdict::Ask, "Codex configuration directory"},
        {".agents", Verdict::Ask, "Agent skills and instructions directory (Codex and others)"},
        {"AGENTS.md", Verdict::Ask, "Instructions loaded into every session of many agents"},
        {"AGENTS.override.md", Verdict::Ask, "Instructions loaded into every Codex session"},

        // ---- Gemini CLI and Qwen Code ----
        {".gemini/settings.json", Verdict::Deny, "Gemini CLI settings: tools, hooks, MCP servers"},
        {".gemini/.env", Verdict::Deny, "Gemini CLI API keys"},
        {".gemini/oauth_creds.json", Verdict::Deny, "Gemini CLI OAuth tokens"},
        {".gemini/mcp-oauth-tokens.json", Verdict::Deny, "Gemini CLI MCP OAuth tokens"},
        {".gemini/a2a-oauth-tokens.json", Verdict::Deny, "Gemini CLI A2A OAuth tokens"},
        {".gemini/google_accounts.json", Verdict::Deny, "Gemini CLI account list"},
        {".gemini/trusted_hooks.json", Verdict::Deny, "Gemini CLI hook trust list"},
        {".gemini/trustedFolders.json", Verdict::Deny,
         "Gemini CLI folder trust: enables project config"},
        {".gemini/policies", Verdict::Deny, "Gemini CLI policy engine rules"},
        {".gemini/commands", Verdict::Deny, "Gemini CLI custom commands: shell injection"},
        {"gemini-credentials.json", Verdict::Deny, "Gemini CLI credentials"},
        {"gemini-cli/settings.json", Verdict::Deny, "Gemini CLI system settings"},
        {"gemini-cli/system-defaults.json", Verdict::Deny, "Gemini CLI system defaults"},
        {".gemini", Verdict::Ask, "Gemini CLI configuration directory: extensions, memory"},
        {"GEMINI.md", Verdict::Ask, "Instructions loaded into every Gemini CLI session"},
        {".qwen/settings.json", Verdict::Deny, "Qwen Code settings: tools, MCP servers"},
        {".qwen/oauth_creds.json", Verdict::Deny, "Qwen Code OAuth tokens"},
        {".qwen", Verdict::Ask, "Qwen Code configuration directory"},
        {"QWEN.md", Verdict::Ask, "Instructions loaded into every Qwen Code session"},

        // ---- Cursor ----
        {".cursor/mcp.json", Verdict::Deny, "Cursor MCP servers: command lines the host launches"},
        {".cursor/hooks.json", Verdict::Deny, "Cursor hooks: commands the host runs"},
        {".cursor/hooks", Verdict::Deny, "Cursor hook scripts"},
        {".cursor/permissions.json", Verdict::Deny, "Cursor terminal and MCP allow-lists"},
        {".cursor/cli-config.json", Verdict::Deny, "Cursor CLI config: permissions and auth"},
        {".cursor/cli.json", Verdict::Deny, "Cursor CLI project permissions"},
        {".config/cursor/cli-config.json", Verdict::Deny, "Cursor CLI config (XDG location)"},
        {".cursor", Verdict::Ask, "Cursor configuration directory: rules"},
        {".cursorrules", Verdict::Ask, "Instructions loaded into every Cursor session"},

        // ---- Windsurf ----
        {".codeium/windsurf/mcp_config.json", Verdict::Deny,
         "Windsurf MCP servers: command lines it launches"},
        {".windsurf/hooks.json", Verdict::Deny, "Windsurf Cascade hooks: commands the host runs"},
        {".codeium/windsurf", Verdict::Ask,
         "Windsurf user configuration: global rules and memories"},
        {".windsurf", Verdict::Ask, "Windsurf project configuration: rules and workflows"},
        {".windsurfrules", Verdict::Ask, "Instructions loaded into every Windsurf session"},

        // ---- Cline and Roo Code ----
        {".clinerules/hooks", Verdict::Deny, "Cline hook scripts: run by the host"},
        {".cline/hooks", Verdict::Deny, "Cline hook scripts: run by the host"},
        {".cline/plugins", Verdict::Deny, "Cline plugins: code the host loads"},
        {".cline/data/settings", Verdict::Deny, "Cline provider keys and MCP servers"},
        {"cline_mcp_settings.json", Verdict::Deny,
         "Cline MCP servers: command lines the host launches"},
        {"Documents/Cline/Hooks", Verdict::Deny, "Cline global hook scripts"},
        {".cline", Verdict::Ask, "Cline configuration directory: rules, skills, workflows"},
        {".clinerules", Verdict::Ask, "Cline rules: instructions loaded into every session"},
        {"Documents/Cline", Verdict::Ask, "Cline global rules and workflows"},
        {".roo/mcp.json", Verdict::Deny, "Roo Code MCP servers: command lines the host launches"},
        {"rooveterinaryinc.roo-cline/settings", Verdict::Deny,
         "Roo Code global MCP servers and modes"},
        {".roo", Verdict::Ask, "Roo Code configuration directory: rules"},
        {".roomodes", Verdict::Ask, "Roo Code custom modes: tool groups and instructions"},

        // ---- Continue ----
        {".continue/config.yaml", Verdict::Deny, "Continue config: models, MCP servers"},
        {".continue/config.json", Verdict::Deny, "Continue config (legacy format)"},
        {".continue/config.ts", Verdict::Deny, "Continue config as code: runs in the host"},
        {".continue/mcpServers", Verdict::Deny,
         "Continue MCP servers: command lines the host launches"},
        {".continuerc.json", Verdict::Deny, "Continue workspace config merged over config.json"},
        {".continue", Verdict::Ask, "Continue configuration directory: rules, prompts"},

        // ---- aider ----
        {".aider.conf.yml", Verdict::Deny, "aider config: lint-cmd and test-cmd run commands"},
        {".aider.model.settings.yml", Verdict::Ask,
         "aider model settings: endpoints and parameters"},
        {".aider.model.metadata.json", Verdict::Ask, "aider model metadata"},

        // ---- Amazon Q and Kiro ----
        {".amazonq/mcp.json", Verdict::Deny, "Amazon Q MCP servers: command lines it launches"},
        {".amazonq/cli-agents", Verdict::Deny,
         "Amazon Q agents: allowed tools, hooks, MCP servers"},
        {".aws/amazonq/mcp.json", Verdict::Deny, "Amazon Q MCP servers: command lines it launches"},
        {".aws/amazonq/cli-agents", Verdict::Deny,
         "Amazon Q agents: allowed tools, hooks, MCP servers"},
        {".amazonq", Verdict::Ask, "Amazon Q configuration directory: rules"},
        {".kiro/settings", Verdict::Deny, "Kiro MCP servers and permissions"},
        {".kiro/hooks", Verdict::Deny, "Kiro agent hooks: commands the host runs"},
        {".kiro/agents", Verdict::Deny, "Kiro agents: tools and permissions on load"},
        {".kiro", Verdict::Ask, "Kiro configuration directory: steering, specs"},

        // ---- OpenCode, Crush, goose and Amp ----
        {"opencode.json", Verdict::Deny, "OpenCode config: permissions, MCP servers, plugins"},
        {"opencode.jsonc", Verdict::Deny, "OpenCode config: permissions, MCP servers, plugins"},
        {".opencode/plugin*", Verdict::Deny, "OpenCode plugins: code the host loads"},
        {".opencode/agent*", Verdict::Deny, "OpenCode agents: tools and permissions on load"},
        {".opencode/command*", Verdict::Deny, "OpenCode commands: shell expansion"},
        {".config/opencode/plugin*", Verdict::Deny, "OpenCode plugins: code the host loads"},
        {".config/opencode/agent*", Verdict::Deny,
         "OpenCode agents: tools and permissions on load"},
        {".config/opencode/command*", Verdict::Deny, "OpenCode commands: shell expansion"},
        {".local/share/opencode/auth.json", Verdict::Deny, "OpenCode provider credentials"},
        {".opencode", Verdict::Ask, "OpenCode project configuration directory"},
        {".config/opencode", Verdict::Ask, "OpenCode user configuration directory"},
        {"crush.json", Verdict::Deny, "Crush config: permissions, MCP servers, LSP commands"},
        {".crush.json", Verdict::Deny, "Crush config: permissions, MCP servers, LSP commands"},
        {".config/crush", Verdict::Ask, "Crush user configuration directory"},
        {".config/goose/config.yaml", Verdict::Deny,
         "goose config: extensions are commands it launches"},
        {".config/goose/permission.yaml", Verdict::Deny, "goose tool permission levels"},
        {".config/goose/permissions", Verdict::Deny, "goose remembered tool permissions"},
        {".config/goose/secrets.yaml", Verdict::Deny, "goose API keys"},
        {".config/goose", Verdict::Ask, "goose configuration directory"},
        {".goosehints", Verdict::Ask, "Instructions loaded into every goose session"},
        {".config/amp/settings.json*", Verdict::Deny, "Amp settings: permissions, MCP servers"},
        {".config/amp/plugins", Verdict::Deny, "Amp plugins: code the host loads"},
        {".amp/settings.json*", Verdict::Deny, "Amp workspace settings: permissions, MCP servers"},
        {"ampcode/managed-settings.json", Verdict::Deny, "Amp managed policy"},
        {".config/amp", Verdict::Ask, "Amp user configuration directory"},
        {".amp", Verdict::Ask, "Amp workspace configuration directory"},

        // ---- GitHub Copilot and VS Code ----
        {".config/github-copilot", Verdict::Deny, "GitHub Copilot OAuth tokens"},
        {".copilot/config.json", Verdict::Ask,
         "Copilot CLI state it rewrites itself: auth, plugins, trusted folders"},
        {".copilot/mcp-config.json", Verdict::Deny,
         "Copilot CLI MCP servers: command lines it launches"},
        {".vscode/mcp.json", Verdict::Deny,
         "VS Code MCP servers: command lines the editor launches"},
        {"Code/User/mcp.json", Verdict::Deny,
         "VS Code user MCP servers: command lines it launches"},
        {".copilot", Verdict::Ask, "Copilot CLI configuration directory"},
        {".github/copilot-instructions.md", Verdict::Ask,
         "Instructions loaded into every Copilot session"},
        {".github/instructions", Verdict::Ask, "Copilot path-specific instructions"},
        {".github/prompts", Verdict::Ask, "Copilot prompt files"},
        {".github/agents", Verdict::Ask, "Copilot custom agents: tools and instructions"},
        {".github/chatmodes", Verdict::Ask, "Copilot chat modes: tools and instructions"},

        // ---- Pi ----
        {".pi/agent/pi-permissions.jsonc", Verdict::Deny, "pi-permission-system policy"},
        {".pi/agent/settings.json", Verdict::Deny, "Pi settings: packages and extensions to load"},
        {".pi/agent/auth.json", Verdict::Deny, "Pi API keys and OAuth credentials"},
        {".pi/agent/mcp.json", Verdict::Deny, "Pi MCP servers: command lines it launches"},
        {".pi/agent/extensions", Verdict::Deny, "Pi extensions: code the host loads"},
        {".pi/settings.json", Verdict::Deny,
         "Pi project settings: packages and extensions to load"},
        {".pi/extensions", Verdict::Deny, "Pi project extensions: code the host loads"},
        {".pi", Verdict::Ask, "Pi configuration directory"},

        // ---- the agents' own access-control files ----
        {".geminiignore", Verdict::Deny, "Gemini CLI's own access rules"},
        {".cursorignore", Verdict::Deny, "Cursor's own access rules"},
        {".aiderignore", Verdict::Deny, "aider's own access rules"},
        {".clineignore", Verdict::Deny, "Cline's own access rules"},
        {".rooignore", Verdict::Deny, "Roo Code's own access rules"},
        {".agentignore", Verdict::Deny, "claudekit file-guard access rules"},
        {".codeiumignore", Verdict::Deny, "Windsurf's own access rules"},
        {".gooseignore", Verdict::Deny, "goose's own access rules"},
        {".kiroignore", Verdict::Deny, "Kiro's own access rules"},
    };
    static_assert(valid_rows(kRows), "an agent-configuration row is malformed");
    return kRows;
}

} // namespace guardfs::guard
