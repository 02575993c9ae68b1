// One registration function per verb group; each adds its subcommands to the app.
#pragma once

#include <CLI/CLI.hpp>

namespace bowline::cli {

void add_template_verbs(CLI::App& app, int& exit_code);
void add_catalog_verbs(CLI::App& app, int& exit_code);
void add_render_verb(CLI::App& template_group, int& exit_code);
void add_kubevirt_verbs(CLI::App& app, int& exit_code);
void add_server_verb(CLI::App& app, int& exit_code);
void add_client_template_verbs(CLI::App& template_group, int& exit_code);
void add_space_verbs(CLI::App& app, int& exit_code);
void add_space_top_verb(CLI::App& space_group, int& exit_code);  // space top
void add_pool_verbs(CLI::App& app, int& exit_code);
void add_user_verbs(CLI::App& app, int& exit_code);
void add_token_verbs(CLI::App& app, int& exit_code);
void add_admin_verbs(CLI::App& app, int& exit_code);  // admin audit|backup|restore
void add_mcp_verb(CLI::App& app, int& exit_code);     // an MCP server for agents
void add_login_verb(CLI::App& app, int& exit_code);
void add_node_verbs(CLI::App& app, int& exit_code);
// bowline node list, cordon, uncordon and drain (client_node_verbs.cpp), under add_node_verbs'
// group.
void add_node_client_verbs(CLI::App& group, int& exit_code);
void add_image_verbs(CLI::App& app, int& exit_code);  // image adopt, run on a node

}  // namespace bowline::cli
