/** The JSON documents gatun prints and answers (Jackson), and a reader and writer of trees without its data binding. Imports only service. */
package dev.gatun.cli.json;
